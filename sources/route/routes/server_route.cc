#include "server_route.h"

namespace ithaca::route {

dispatch_status server_route::dispatch(request_slot& slot, dispatch_env& env) const {
  slot.action = commands::execute_server_command(slot.req, env.out, *env.server);
  return dispatch_status::Done;
}

}  // namespace ithaca::route
