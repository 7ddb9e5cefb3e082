#include "rate_limit_route.h"

#include "command_class.h"
#include "route_util.h"

namespace ithaca::route {

namespace {
constexpr std::string_view kLimited = "SERVER_ERROR rate limited";
}  // namespace

rate_limit_route::rate_limit_route(std::string name, const route& child, const route* fallback,
                                   const std::array<double, kClasses>& rate, const std::array<double, kClasses>& burst)
    : route(std::move(name)), child_(child), fallback_(fallback) {
  for (std::size_t c = 0; c < kClasses; ++c) buckets_[c] = std::make_unique<token_bucket>(rate[c], burst[c]);
}

bool rate_limit_route::answers_in_result() const {
  return child_.answers_in_result() && (fallback_ == nullptr || fallback_->answers_in_result());
}

std::vector<const route*> rate_limit_route::children() const {
  if (fallback_ == nullptr) return {&child_};
  return {&child_, fallback_};
}

dispatch_status rate_limit_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  const protocol::op_class c = protocol::operation_of(slot.req);
  if (c == protocol::op_class::None || buckets_[static_cast<std::size_t>(c)]->take()) {
    return child_.dispatch(slot, env);
  }
  route_counters::add(counters().rate_limited);
  if (fallback_ != nullptr) return fallback_->dispatch(slot, env);
  refuse(slot.req, slot.result, kLimited, protocol::binary_status::TemporaryFailure);
  return dispatch_status::Pending;  // no calls: ready at once, in order
}

}  // namespace ithaca::route
