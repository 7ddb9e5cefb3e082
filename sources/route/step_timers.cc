#include "step_timers.h"

#include <algorithm>

namespace ithaca::route {

bool step_timers::arm(flow::request_slot& s, std::int64_t deadline_ns) {
  if (heap_.size() >= kMaxPending) return false;
  s.add_call();
  heap_.push_back({deadline_ns, seq_++, &s});
  std::push_heap(heap_.begin(), heap_.end(), later);
  return true;
}

std::size_t step_timers::fire_due(std::int64_t now_ns) {
  std::size_t n = 0;
  while (!heap_.empty() && heap_.front().deadline <= now_ns) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    flow::request_slot* s = heap_.back().slot;
    heap_.pop_back();
    ++n;
    // Out of the heap first: call_done may free the slot (an orphan), or
    // hand it to its home to resume, which never dispatches from here.
    s->call_done();
  }
  return n;
}

}  // namespace ithaca::route
