#include "local_route.h"

namespace ithaca::route {

dispatch_status local_route::dispatch(request_slot& slot, dispatch_env& env) const {
  slot.action = cache::execute(slot.req, env.out, env.exec);
  return dispatch_status::Done;
}

}  // namespace ithaca::route
