// Composition's two moves (route.h): resuming a slot's frames, and sending a
// child route a step of a composite's request.
#include "route.h"

namespace ithaca::route {

dispatch_status route::resume(request_slot&, dispatch_env&) const { return dispatch_status::Done; }

void resume_slot(request_slot& slot, dispatch_env& env) {
  while (slot.has_frames()) {
    const route& r = static_cast<const route&>(*slot.top_frame().owner);
    slot.begin_dispatch();
    if (r.resume(slot, env) == dispatch_status::Pending) {
      // More calls (or none: then the slot comes back at once, in order).
      slot.end_dispatch();
      return;
    }
    slot.abandon_dispatch();
    slot.pop_frame();
  }
  slot.finish();
}

void dispatch_child(const route& r, request_slot& slot, dispatch_env& env) {
  slot.add_call();  // this step, until the child has started all of its calls
  r.dispatch(slot, env);
  slot.call_done();
}

}  // namespace ithaca::route
