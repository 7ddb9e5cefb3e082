// The `l1l2` route: this ithaca's own store as an L1 in front of a route
// (L2), as a client-side near cache. A plain `get` (text or binary, one key
// or several) is answered from L1 for the keys it holds (counted in l1_hits);
// the others go to L2, and what L2 has is kept in L1 for `exptime` seconds
// (the cap: L2's TTL is not asked, so L1 may keep a value up to `exptime`
// past its L2 expiry). Every other request with keys (sets, deletes, touches,
// arithmetic, gets/gat/gats, meta commands) first removes its keys from L1,
// then goes to L2: L1 never serves a value this ithaca changed or deleted
// through L2, and a get that read L2 while such a write was under way keeps
// nothing in L1 (a write count per key stripe, compared before and after the
// fill). What other routers or clients change in L2 is seen once L1's copy
// expires (the cap bounds how stale L1 can be). flush_all goes to L2 only
// (L1's values expire).
//
// The store is reached through dispatch_env::local (flow::local_executor).
// A detached request (async_runner: shadow copies, all_async children) has
// none: there the route is L2 alone (its writes cannot invalidate L1).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>
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
  static constexpr std::size_t kStripes = 1024;
  std::atomic<std::uint64_t>& stripe(std::string_view key) const;
  // The sum of the write counts of the stripes of c's keys.
  std::uint64_t writes_seen(const request_slot& slot, const request_slot& c) const;
  const route& l2_;
  std::uint32_t exptime_;  // L1's TTL cap (> 0)
  // Writes through this route by key stripe (any worker; seq_cst): a get
  // whose keys saw a write while it read L2 keeps nothing in L1.
  mutable std::array<std::atomic<std::uint64_t>, kStripes> writes_{};
};

}  // namespace ithaca::route
