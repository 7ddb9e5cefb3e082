// A binary min-heap of deadlines: add, cancel and pop are O(log n); each timer
// knows its heap index so cancel needs no search. One per machine, no lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mm {
class call;
}

namespace mm::detail {

struct timer {
  int64_t deadline_ns = 0;
  size_t index = kNotArmed;  // position in the heap
  call* owner = nullptr;     // the wait this timer ends
  static constexpr size_t kNotArmed = static_cast<size_t>(-1);
  bool armed() const { return index != kNotArmed; }
};

class timer_heap {
 public:
  void add(timer* t);
  void remove(timer* t);
  timer* top() const { return heap_.empty() ? nullptr : heap_.front(); }
  size_t size() const { return heap_.size(); }

 private:
  void sift_up(size_t i);
  void sift_down(size_t i);
  void place(size_t i, timer* t) {
    heap_[i] = t;
    t->index = i;
  }
  std::vector<timer*> heap_;
};

}  // namespace mm::detail
