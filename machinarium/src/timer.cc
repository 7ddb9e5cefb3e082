#include "timer.h"

namespace mm::detail {

void timer_heap::add(timer* t) {
  heap_.push_back(t);
  t->index = heap_.size() - 1;
  sift_up(t->index);
}

void timer_heap::remove(timer* t) {
  if (!t->armed()) return;
  size_t i = t->index;
  timer* last = heap_.back();
  heap_.pop_back();
  t->index = timer::kNotArmed;
  if (last == t) return;
  place(i, last);
  sift_up(i);
  sift_down(last->index);
}

void timer_heap::sift_up(size_t i) {
  timer* t = heap_[i];
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (heap_[parent]->deadline_ns <= t->deadline_ns) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, t);
}

void timer_heap::sift_down(size_t i) {
  timer* t = heap_[i];
  size_t n = heap_.size();
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_[child + 1]->deadline_ns < heap_[child]->deadline_ns) child++;
    if (t->deadline_ns <= heap_[child]->deadline_ns) break;
    place(i, heap_[child]);
    i = child;
  }
  place(i, t);
}

}  // namespace mm::detail
