// The `warm_up` route (mcrouter's WarmUpRoute): a new (cold) pool is filled
// from an old (warm) one as clients read it, so adding servers does not
// raise the miss rate. A `get` (text or binary, one key or several) goes to
// the cold child; the keys it misses are read from the warm child, the
// client gets what warm has, and each value found is added to the cold child
// by a detached `add` (async_runner: the client does not wait for it; an
// add, so a value set on cold meanwhile is not overwritten), counted in
// warm_fills (async_dropped when the worker's bound refuses it).
//
// The fill's TTL: `exptime` when it is not 0; with 0, what the warm item has
// left, asked with `mg KEY t v f` (one per missing key) where the warm child
// speaks meta. A warm child that speaks only ascii cannot say (the mg is
// refused by its codec): its keys are then read with a plain get and filled
// with no expiry (mcrouter's fill without metaget), the documented fallback.
// An item whose TTL runs out as it is read is answered but not filled.
//
// A meta client's `mg` that only reads (no T, N, R, E or q) is read from
// warm the same way on a miss or an error on cold: warm is sent the client's
// mg (its reply is the client's, as warm gives it) and `mg KEY t v f` for
// the fill (with an ascii warm backend, the client's own reply holds the
// value when it asked for it: v).
//
// Everything else (sets, deletes, arithmetic, touches, gets/gats/gat whose
// CAS or TTL belongs to the cold server, other meta commands, lease-get)
// goes to the cold child only: the client keeps the warm pool consistent.
#pragma once

#include <cstdint>
#include <vector>

#include "route.h"

namespace ithaca::route {

class warm_up_route final : public route {
 public:
  warm_up_route(std::string name, const route& cold, const route& warm, std::uint32_t exptime);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "warm_up"; }
  std::vector<const route*> children() const override { return {&cold_, &warm_}; }

 private:
  dispatch_status after_cold(request_slot& slot, dispatch_env& env) const;
  dispatch_status after_meta(request_slot& slot, dispatch_env& env) const;
  dispatch_status after_get(request_slot& slot, dispatch_env& env) const;
  dispatch_status after_cold_mg(request_slot& slot, dispatch_env& env) const;
  dispatch_status after_warm_mg(request_slot& slot, dispatch_env& env) const;
  void send_get(request_slot& slot, dispatch_env& env, const std::vector<std::uint32_t>& keys) const;
  // An `add` of key `i`'s value (in slot.result) to the cold child.
  void fill(request_slot& slot, dispatch_env& env, std::size_t i, std::int64_t ttl) const;
  void send_add(std::string_view key, std::string_view value, std::uint32_t flags, std::int64_t ttl,
                dispatch_env& env) const;
  const route& cold_;
  const route& warm_;
  std::uint32_t exptime_;  // 0: the TTL the warm item has left
};

// The pieces of a meta `VA` reply to `mg KEY t v f` (Raw passthrough):
// false when it is not a hit (EN, an error) or does not parse. ttl: seconds
// left, -1 for none.
bool parse_meta_value(std::string_view raw, std::string_view& value, std::uint32_t& flags, std::int64_t& ttl);

}  // namespace ithaca::route
