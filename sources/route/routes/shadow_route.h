// The `shadow` route (mcrouter's ShadowRoute): every request goes to the
// normal child and is answered from it; a copy of some of them also goes to
// each shadow, as a detached request (async_runner.h: bounded per worker,
// its reply dropped). A shadow takes the keys whose key_fraction
// (route_util.h) falls in [key_fraction_lo, key_fraction_hi), and of those a
// request_fraction at random: to try a new pool with real traffic.
#pragma once

#include <vector>

#include "route.h"

namespace ithaca::route {

struct shadow_target {
  const route* target = nullptr;
  double key_lo = 0;
  double key_hi = 1;
  double request_fraction = 1;
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
  const route& normal_;
  std::vector<shadow_target> shadows_;
};

}  // namespace ithaca::route
