#include "fixed_reply_route.h"

#include "route_util.h"

namespace ithaca::route {

dispatch_status null_route::dispatch(request_slot& slot, dispatch_env&) const {
  counters().requests.fetch_add(1, std::memory_order_relaxed);
  default_reply(slot.req, slot.result);
  return dispatch_status::Pending;  // no calls: ready at once, in order
}

error_route::error_route(std::string name, std::string message) : route(std::move(name)) {
  const bool whole = message.starts_with("SERVER_ERROR") || message.starts_with("CLIENT_ERROR");
  line_ = whole ? std::move(message) : "SERVER_ERROR " + message;
}

dispatch_status error_route::dispatch(request_slot& slot, dispatch_env&) const {
  counters().requests.fetch_add(1, std::memory_order_relaxed);
  refuse(slot.req, slot.result, line_, protocol::binary_status::InternalError);
  return dispatch_status::Pending;  // no calls: ready at once, in order
}

}  // namespace ithaca::route
