#include "modify_exptime_route.h"

#include <ctime>

#include "route_util.h"

namespace ithaca::route {

modify_exptime_route::modify_exptime_route(std::string name, const route& child, std::int64_t exptime, bool cap)
    : route(std::move(name)), child_(child), exptime_(exptime), cap_(cap) {}

dispatch_status modify_exptime_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  if (carries_exptime(slot.req)) {
    if (cap_) {
      cap_exptime(slot.req, static_cast<std::uint32_t>(exptime_), static_cast<std::int64_t>(std::time(nullptr)));
    } else {
      set_exptime(slot.req, exptime_);
    }
  }
  return child_.dispatch(slot, env);
}

}  // namespace ithaca::route
