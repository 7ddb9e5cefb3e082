// Timed steps of composite routes: a slot that must wait before its route's
// next step (latency_injection's delays) holds one call of its own
// (request_slot.h) that this heap ends at its deadline. So the wait blocks
// neither the worker nor the client's other requests: the slot is Pending
// like one waiting for a server, and its home resumes the route's frame once
// the timer ends the call (route::resume_slot).
//
// Run by the worker's "async" coroutine (async_runner::run), which sleeps
// until the earliest deadline; an earlier one wakes it. When the worker stops
// every timer ends at once (fire_all): a wait is cancelled, never lost.
// Bound: kMaxPending timers per worker; past it arm() refuses (the route
// goes on without the wait) and the refusal is counted by the caller.
//
// Lifetime: a slot with a call pending is never freed (its client orphans it
// instead, request_slot.h), so the heap's pointers stay valid until the call
// is ended here; an orphan frees itself then.
//
// Thread: the worker machine only. No lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "request_slot.h"

namespace ithaca::route {

class step_timers {
 public:
  static constexpr std::size_t kMaxPending = 65536;

  step_timers() = default;
  step_timers(const step_timers&) = delete;
  step_timers& operator=(const step_timers&) = delete;

  // Adds one call to `s` that ends at `deadline_ns` (mm::now_ns() clock).
  // False (no call added) past kMaxPending.
  bool arm(flow::request_slot& s, std::int64_t deadline_ns);
  // The earliest deadline, or -1 when none is armed.
  std::int64_t next_deadline() const { return heap_.empty() ? -1 : heap_.front().deadline; }
  // Ends the call of every timer due at `now_ns`, earliest first.
  std::size_t fire_due(std::int64_t now_ns);
  // Ends every call now (the worker stops).
  std::size_t fire_all() { return fire_due(INT64_MAX); }
  std::size_t pending() const { return heap_.size(); }

 private:
  struct timer {
    std::int64_t deadline;
    std::uint64_t seq;  // arm order: equal deadlines end in that order
    flow::request_slot* slot;
  };
  // Min-heap on (deadline, seq).
  static bool later(const timer& a, const timer& b) {
    return a.deadline != b.deadline ? a.deadline > b.deadline : a.seq > b.seq;
  }
  std::vector<timer> heap_;
  std::uint64_t seq_ = 0;
};

}  // namespace ithaca::route
