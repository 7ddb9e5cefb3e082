// The `l1l2` route: this ithaca's own store as an L1 in front of a route
// (L2), as a client-side near cache. A plain `get` (text or binary, one key
// or several) is answered from L1 for the keys it holds (counted in l1_hits);
// the others go to L2, and what L2 has is kept in L1 for `exptime` seconds
// (the cap: L2's TTL is not asked, so L1 may keep a value up to `exptime`
// past its L2 expiry). Every other request with keys (sets, deletes, touches,
// arithmetic, gets/gat/gats, meta commands) first removes its keys from L1,
// then goes to L2: L1 never serves a value this ithaca changed or deleted
// through L2. What other routers or clients change in L2 is seen once L1's
// copy expires, and a get whose L2 reply was read before a concurrent write
// reached L2 may keep the old value for up to `exptime` (the cap bounds how
// stale L1 can be). flush_all goes to L2 only (L1's values expire).
//
// The store is reached through dispatch_env::local (flow::local_executor).
// A detached request (async_runner: shadow copies, all_async children) has
// none: there the route is L2 alone (its writes cannot invalidate L1).
#pragma once

#include <cstdint>
#include <vector>

#include "route.h"

namespace ithaca::route {

class l1l2_route final : public route {
 public:
  l1l2_route(std::string name, const route& l2, std::uint32_t exptime);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "l1l2"; }
  std::vector<const route*> children() const override { return {&l2_}; }

 private:
  const route& l2_;
  std::uint32_t exptime_;  // L1's TTL cap (> 0)
};

}  // namespace ithaca::route
