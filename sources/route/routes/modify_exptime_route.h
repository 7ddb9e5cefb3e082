// The `modify_exptime` route (mcrouter's ModifyExptimeRoute): writes and
// touches go to the child with their exptime set to `exptime` (action set)
// or capped at it (action min: a longer TTL, or none, becomes it). Other
// requests pass unchanged.
#pragma once

#include <cstdint>

#include "route.h"

namespace ithaca::route {

class modify_exptime_route final : public route {
 public:
  modify_exptime_route(std::string name, const route& child, std::int64_t exptime, bool cap);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  bool answers_in_result() const override { return child_.answers_in_result(); }
  const char* kind() const override { return "modify_exptime"; }
  std::vector<const route*> children() const override { return {&child_}; }

 private:
  const route& child_;
  std::int64_t exptime_;
  bool cap_;
};

}  // namespace ithaca::route
