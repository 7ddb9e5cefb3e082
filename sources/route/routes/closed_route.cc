#include "closed_route.h"

namespace ithaca::route {

dispatch_status closed_route::dispatch(request_slot& slot, dispatch_env&) const {
  slot.action = exec_action::Close;
  return dispatch_status::Done;
}

}  // namespace ithaca::route
