// The `rate_limit` route: a token bucket per operation class (get, set,
// delete, arithmetic, touch; requests per second with a burst) shared by
// every worker. A request within its class's rate goes to the child; one
// over it goes to the fallback route, or, without one, gets
// "SERVER_ERROR rate limited".
#pragma once

#include <array>
#include <memory>

#include "route.h"
#include "token_bucket.h"

namespace ithaca::route {

class rate_limit_route final : public route {
 public:
  static constexpr std::size_t kClasses = 5;
  rate_limit_route(std::string name, const route& child, const route* fallback,
                   const std::array<double, kClasses>& rate, const std::array<double, kClasses>& burst);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  bool answers_in_result() const override;
  const char* kind() const override { return "rate_limit"; }
  std::vector<const route*> children() const override;
  // The child (the fallback only takes what is over the rate).
  std::vector<const route*> targets_for(const protocol::request&) const override { return {&child_}; }

 private:
  const route& child_;
  const route* fallback_;
  std::array<std::unique_ptr<token_bucket>, kClasses> buckets_;
};

}  // namespace ithaca::route
