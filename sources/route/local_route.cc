#include "local_route.h"

namespace ithaca::route {

dispatch_status local_route::dispatch(request_slot& slot, dispatch_env& env) const {
  slot.action = env.local->execute(slot.req, env.out);
  return dispatch_status::Done;
}

}  // namespace ithaca::route
