#include "ack_route.h"

#include "ack_waiters.h"
#include "command_class.h"
#include "observer.h"

namespace ithaca::route {

dispatch_status ack_route::dispatch(request_slot& slot, dispatch_env& env) const {
  if (!env.acks || !protocol::modifies(slot.req)) return child_.dispatch(slot, env);
  replication::ack_state& state = env.acks->state();
  // Before the store call: the fan-out drain that pops this write's record
  // then sees a write waiting and asks the slaves (ack_state.h).
  state.waiting.fetch_add(1, std::memory_order_seq_cst);
  const replication::change_mark before = replication::thread_change_mark();
  // The reply is rendered into the slot (empty between uses): it may have to wait.
  dispatch_env inner{env.local, env.server, slot.deferred, env.backends, env.acks, env.async};
  child_.dispatch(slot, inner);  // the local route: always Done
  const replication::change_mark after = replication::thread_change_mark();
  const bool changed = after.changes != before.changes;
  if (changed && after.lost == before.lost && after.streamed != before.streamed &&
      env.acks->park(slot, after.position, mm::deadline_after(static_cast<mm::millis>(timeout_ms_)))) {
    slot.add_call();  // the ack waiters' call_done() releases it
    slot.reply_in_deferred = true;
    return dispatch_status::Pending;
  }
  state.waiting.fetch_sub(1, std::memory_order_relaxed);
  if (changed) {
    // Not replicated at all: no slave attached, or its record was lost.
    state.counters().ack_unreplicated.fetch_add(1, std::memory_order_relaxed);
    reply_unconfirmed(slot);
  }
  if (&env.out != &slot.deferred) env.out.splice(slot.deferred);
  return dispatch_status::Done;
}

}  // namespace ithaca::route
