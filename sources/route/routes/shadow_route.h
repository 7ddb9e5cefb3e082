// The `shadow` route (mcrouter's ShadowRoute): every request goes to the
// normal child and is answered from it; a copy of some of them also goes to
// each shadow, as a detached request (async_runner.h: bounded per worker,
// its reply dropped). A shadow takes the keys whose key_fraction
// (route_util.h) falls in [key_fraction_lo, key_fraction_hi), and of those a
// request_fraction at random: to try a new pool with real traffic. An
// mcrouter file's shadows place keys as mcrouter does (shadow_target), and a
// PoolRoute's `shadows` shadow only some of its servers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pool.h"
#include "route.h"
#include "runtime_vars.h"

namespace ithaca::route {

struct shadow_target {
  const route* target = nullptr;
  double key_lo = 0;
  double key_hi = 1;
  double request_fraction = 1;
  // mcrouter's ShadowSettings (an mcrouter file): the key is its routing key
  // (up to "|#|"), its place SpookyHash V2's 32-bit hash (seed 0), taken when
  // in [key_lo, key_hi] * (2^32 - 1), both ends included; or, with `keys`
  // (keys_to_shadow, sorted), when it is one of them.
  bool mcrouter = false;
  std::vector<std::string> keys;
  // A PoolRoute's shadows (mcrouter shadows the pool's destinations
  // [index_lo, index_hi)): only keys whose server in `pool` is in that range
  // (keys_to_shadow: any server). Null: every key.
  const proxy::pool* pool = nullptr;
  std::uint32_t index_lo = 0, index_hi = 0;
  // key_fraction_range_rv: the runtime variable (runtime_vars.h) whose range,
  // once the file gives it one, replaces [key_lo, key_hi]. Null: none.
  const runtime_range* rv = nullptr;
};

class shadow_route final : public route {
 public:
  shadow_route(std::string name, const route& normal, std::vector<shadow_target> shadows);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  bool answers_in_result() const override { return normal_.answers_in_result(); }
  const char* kind() const override { return "shadow"; }
  std::vector<const route*> children() const override;
  // The normal child, then each shadow whose key range holds the key.
  std::vector<const route*> targets_for(const protocol::request& req) const override;

 private:
  // Whether `s` takes a copy of a request for `key` (its key share, keys,
  // servers; not request_fraction).
  static bool takes(const shadow_target& s, std::string_view key);

  const route& normal_;
  std::vector<shadow_target> shadows_;
};

}  // namespace ithaca::route
