// park_set: sockets waiting for input without a coroutine each. A parked
// entry's io_state carries a callback (on_input) that the backend's readiness
// report runs from the scheduler; it moves the entry to the ready queue and
// signals the pool. Timeouts are one sorted list and one coroutine's timer.
// Machine thread only.
#include "internal.h"

namespace mm {

void park_set::list::push_back(entry* e) {
  e->next = nullptr;
  e->prev = tail;
  if (tail) {
    tail->next = e;
  } else {
    head = e;
  }
  tail = e;
}

void park_set::list::insert_by_deadline(entry* e) {
  entry* after = tail;
  while (after && after->deadline > e->deadline) after = after->prev;
  e->prev = after;
  e->next = after ? after->next : head;
  if (e->next) {
    e->next->prev = e;
  } else {
    tail = e;
  }
  if (after) {
    after->next = e;
  } else {
    head = e;
  }
}

void park_set::list::unlink(entry* e) {
  if (e->prev) {
    e->prev->next = e->next;
  } else {
    head = e->next;
  }
  if (e->next) {
    e->next->prev = e->prev;
  } else {
    tail = e->prev;
  }
  e->prev = e->next = nullptr;
}

void park_set::park(entry& e, millis timeout) {
  if (e.where != entry::place::None) remove(e);
  e.set = this;
  e.where = entry::place::Parked;
  e.expired = false;
  e.deadline = deadline_after(timeout);
  if (e.deadline < 0) {
    untimed_.push_back(&e);
  } else {
    timed_.insert_by_deadline(&e);
    // A new earliest deadline: the timer sleeps until the old one.
    if (timed_.head == &e && timer_call_) timer_call_->wake();
  }
  parked_++;
  detail::io_state* s = e.conn->state_;
  s->on_input = &park_set::input_ready;
  s->on_input_arg = &e;
}

void park_set::queue(entry& e) {
  if (e.where != entry::place::None) remove(e);
  e.set = this;
  e.expired = false;
  to_queue(e);
}

void park_set::unhook(entry& e) {
  if (e.conn && e.conn->state_) e.conn->state_->on_input = nullptr;
}

void park_set::remove(entry& e) {
  switch (e.where) {
    case entry::place::None: return;
    case entry::place::Parked:
      unhook(e);
      (e.deadline < 0 ? untimed_ : timed_).unlink(&e);
      parked_--;
      break;
    case entry::place::Queued:
      ready_.unlink(&e);
      queued_--;
      break;
  }
  e.where = entry::place::None;
}

// From io_state_ready, in the scheduler: input, end of stream or an error
// may be there. The io_state already cleared its callback.
void park_set::input_ready(void* arg) {
  auto* e = static_cast<entry*>(arg);
  park_set* self = e->set;
  (e->deadline < 0 ? self->untimed_ : self->timed_).unlink(e);
  self->parked_--;
  e->where = entry::place::None;
  e->expired = false;
  self->to_queue(*e);
}

void park_set::to_queue(entry& e) {
  e.where = entry::place::Queued;
  ready_.push_back(&e);
  queued_++;
  queued_cond_.signal();
  if (on_queued) on_queued();
}

park_set::entry* park_set::take() {
  entry* e = ready_.head;
  if (!e) return nullptr;
  ready_.unlink(e);
  queued_--;
  e->where = entry::place::None;
  return e;
}

wait_status park_set::wait(millis timeout) {
  if (ready_.head) return wait_status::Ok;
  return queued_cond_.wait(timeout);
}

void park_set::run_timeouts() {
  for (;;) {
    const int64_t now = now_ns();
    while (entry* e = timed_.head) {
      if (e->deadline > now) break;
      unhook(*e);
      timed_.unlink(e);
      parked_--;
      e->where = entry::place::None;
      e->expired = true;
      to_queue(*e);
    }
    call k;
    timer_call_ = &k;
    wait_status s = k.wait_until(timed_.head ? timed_.head->deadline : -1);
    timer_call_ = nullptr;
    if (s == wait_status::Cancelled) return;
  }
}

std::vector<park_set::entry*> park_set::drain() {
  std::vector<entry*> all;
  for (list* l : {&timed_, &untimed_, &ready_}) {
    while (entry* e = l->head) {
      if (e->where == entry::place::Parked) unhook(*e);
      l->unlink(e);
      e->where = entry::place::None;
      all.push_back(e);
    }
  }
  parked_ = queued_ = 0;
  return all;
}

}  // namespace mm
