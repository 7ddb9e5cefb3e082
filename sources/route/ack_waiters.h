// One worker's client writes waiting for a slave's confirmation
// (`replication.ack: slave`, replication/ack_state.h), and the coroutine that
// releases them: "ack waiters", one per worker machine.
//
// A write's slot is parked here with its reply already rendered in its
// `deferred` buffer and one backend-call count of its own (request_slot.h),
// so the client's in-order queue holds it, and every reply behind it, until
// this coroutine calls call_done(): when a slave has confirmed a position at
// or past the write's, or at its deadline (the reply is then replaced by the
// error), or when the worker stops.
//
// A worker claims ring positions one store call after another, so its parked
// writes are in position order: a FIFO whose head is the only one a
// confirmation needs to look at. Their deadlines are in the same order while
// one ack_timeout holds; a SIGHUP that shortens it parks later writes with
// earlier deadlines behind the old ones. Each write still times out at its
// own deadline: once a deadline is out of order, timeouts are found by a scan
// (and the sleep is until the earliest deadline) until the FIFO empties.
//
// Thread: the worker machine only (dispatch parks, the coroutine releases);
// the fan-out machine only writes the eventfd (ack_state::confirm). No lock.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>

#include "ack_state.h"
#include "machinarium.h"
#include "request_slot.h"

namespace ithaca::route {

using flow::request_slot;

// The error a write gets when no slave confirmed it: it WAS applied on the
// master (a later read there sees it) but may be lost by a failover.
inline constexpr std::string_view kUnconfirmed = "SERVER_ERROR applied on the master but not confirmed by a slave";

// Replaces the slot's rendered reply with kUnconfirmed in its protocol:
// binary 0x0086 (temporary failure) with the text, quiet opcodes included;
// meta and classic text as a line, except classic `noreply` (which hides
// every reply, as memcached's does). The slot's request must be alive.
void reply_unconfirmed(request_slot& slot);

class ack_waiters {
 public:
  ack_waiters(replication::ack_state& state, unsigned worker);
  ~ack_waiters();
  ack_waiters(const ack_waiters&) = delete;
  ack_waiters& operator=(const ack_waiters&) = delete;

  replication::ack_state& state() { return state_; }

  // Parks `slot` (reply in slot.deferred; the caller has done slot.add_call()
  // and counted it in state().waiting) until position is confirmed or the
  // deadline. False when the coroutine is not running: answer at once.
  bool park(request_slot& slot, std::uint64_t position, std::int64_t deadline_ns);

  // The coroutine "ack waiters": until cancelled (the worker stops), then
  // releases every parked slot with the error.
  void run();

 private:
  struct entry {
    request_slot* slot;
    std::uint64_t position;
    std::int64_t deadline_ns;
    std::int64_t parked_ns;
  };
  // Confirmed (the reply stands) or not (the error replaces it).
  void release(const entry& e, bool confirmed, std::int64_t now);
  // Releases every entry past its deadline (the head only while deadlines
  // are in order) and returns the earliest deadline left.
  std::int64_t release_expired(std::int64_t now);
  // Waits until the head may be released (a wake from the replication fan-out machine) or the
  // earliest deadline.
  mm::wait_status sleep_for_head(std::int64_t deadline_ns);

  replication::ack_state& state_;
  replication::ack_state::worker_wake& wake_;
  std::unique_ptr<mm::io> event_;  // a dup of wake_.event_fd, on this machine
  std::deque<entry> parked_;
  bool unordered_deadlines_ = false;  // a parked deadline is earlier than one before it
  mm::call idle_;                     // the coroutine waits here while nothing is parked
  bool running_ = false;
};

}  // namespace ithaca::route
