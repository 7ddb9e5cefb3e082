// The suspension primitive. Every wait in machinarium (sleep, cond, channel,
// join, socket I/O, signals, blocking calls) is a call::wait_until: arm a
// timer, record the wait on the coroutine so a wake or cancel can find it,
// switch to the scheduler, and report why we came back.
#include "internal.h"

namespace mm {

using detail::coroutine;
using detail::coroutine_state;

call::call() = default;
call::~call() = default;

wait_status call::wait(millis timeout) { return wait_until(deadline_after(timeout)); }

wait_status call::wait_until(int64_t deadline_ns) {
  machine* m = detail::current_machine();
  coroutine* c = m->current();
  c->call_sequence++;
  if (c->cancelled) return wait_status::Cancelled;
  coroutine_ = c;
  woken_ = false;
  status_ = wait_status::Ok;
  c->current_call = this;
  detail::timer t;
  if (deadline_ns >= 0) {
    t.deadline_ns = deadline_ns;
    t.owner = this;
    m->timers_.add(&t);
    m->timers_pending_.store(m->timers_.size(), std::memory_order_relaxed);
  }
  c->state = coroutine_state::Waiting;
  m->suspend();
  // Back: woken by wake(), the timer, or a cancel (which set status_).
  m->timers_.remove(&t);
  c->current_call = nullptr;
  coroutine_ = nullptr;
  return status_;
}

void call::wake() {
  if (coroutine_) coroutine::wake(coroutine_, this, wait_status::Ok);
}

remote_waiter::remote_waiter()
    : machine_(detail::current_machine()),
      coroutine_(detail::current_coroutine()->id),
      // The next wait of this coroutine will carry this sequence number.
      sequence_(detail::current_coroutine()->call_sequence + 1) {}

wait_status remote_waiter::wait_until(int64_t deadline_ns) {
  call k;
  return k.wait_until(deadline_ns);
}

void remote_waiter::wake() const { detail::post_wake(machine_, coroutine_, sequence_); }

namespace detail {

bool waiter_list::remove(remote_waiter* w) {
  for (auto it = list_.begin(); it != list_.end(); ++it) {
    if (*it == w) {
      list_.erase(it);
      return true;
    }
  }
  return false;
}

remote_waiter* waiter_list::pop() {
  if (list_.empty()) return nullptr;
  remote_waiter* w = list_.front();
  list_.pop_front();
  return w;
}

}  // namespace detail

// ------------------------------------------------------------ cond, wait_group

void cond::signal() {
  while (!waiters_.empty()) {
    call* k = waiters_.front();
    waiters_.pop_front();
    if (k->waiting()) {
      k->wake();
      return;
    }
  }
  signalled_ = true;
}

void cond::broadcast() {
  auto waiters = std::move(waiters_);
  waiters_.clear();
  bool woke = false;
  for (call* k : waiters) {
    if (k->waiting()) {
      k->wake();
      woke = true;
    }
  }
  if (!woke) signalled_ = true;
}

wait_status cond::wait(millis timeout) {
  if (signalled_) {
    signalled_ = false;
    return wait_status::Ok;
  }
  call k;
  waiters_.push_back(&k);
  wait_status s = k.wait(timeout);
  std::erase(waiters_, &k);
  if (s == wait_status::Ok) signalled_ = false;
  return s;
}

void wait_group::done() {
  if (--count_ <= 0) {
    count_ = 0;
    zero_.broadcast();
  }
}

wait_status wait_group::wait(millis timeout) {
  int64_t deadline = deadline_after(timeout);
  while (count_ > 0) {
    wait_status s = zero_.wait(millis_until(deadline));
    if (s != wait_status::Ok) return s;
  }
  return wait_status::Ok;
}

}  // namespace mm
