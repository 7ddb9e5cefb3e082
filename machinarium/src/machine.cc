// The machine: thread start-up, the scheduler loop, context switches, the
// inbox of cross-thread messages, and the public machine/coroutine API.
#include <time.h>

#include <atomic>
#include <exception>
#include <future>

#include "asan.h"
#include "internal.h"

namespace mm {

namespace {
thread_local machine* tl_machine = nullptr;
std::atomic<coroutine_id> g_next_coroutine_id{1};
}  // namespace

namespace detail {

machine* current_machine() { return tl_machine; }
coroutine* current_coroutine() { return tl_machine ? tl_machine->current() : nullptr; }

int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

bool coroutine::wake(coroutine* c, call* k, wait_status status) {
  if (c->state != coroutine_state::Waiting || c->current_call != k) return false;
  k->status_ = status;
  k->woken_ = true;
  tl_machine->make_ready(c);
  return true;
}

void post_wake(machine* m, coroutine_id id, uint64_t sequence) {
  if (m == tl_machine) {
    // Same machine: wake directly, no inbox round trip.
    coroutine* c = m->find(id);
    if (c && c->call_sequence == sequence && c->current_call) coroutine::wake(c, c->current_call, wait_status::Ok);
    return;
  }
  inbox_message msg{inbox_message::kind::Wake, id, sequence, {}, {}};
  m->post(std::move(msg));
}

}  // namespace detail

using detail::coroutine;
using detail::coroutine_state;

machine::machine(machine_config cfg) : cfg_(std::move(cfg)), stacks_(cfg_.stack_size, cfg_.stack_cache_max) {}

machine::~machine() {
  // All coroutines have ended when run() returns; nothing else to free.
}

void machine::post(detail::inbox_message msg) {
  bool was_empty;
  {
    std::lock_guard lock(inbox_mutex_);
    was_empty = inbox_.empty();
    inbox_.push_back(std::move(msg));
    inbox_pending_.store(true, std::memory_order_release);
  }
  if (was_empty) backend_->notify();
}

coroutine* machine::find(coroutine_id id) const {
  auto it = coroutines_.find(id);
  return it == coroutines_.end() ? nullptr : it->second;
}

coroutine* machine::create(std::string_view name, std::function<void()> fn) {
  auto* c = new coroutine;
  c->id = g_next_coroutine_id.fetch_add(1, std::memory_order_relaxed);
  c->name = name;
  c->fn = std::move(fn);
  c->cancelled = stopping_;
  c->stack_size = stacks_.stack_size();
  try {
    c->fiber = boost::context::fiber(std::allocator_arg, detail::stack_allocator{&stacks_, &c->stack_bottom},
                                     [c](boost::context::fiber&& caller) {
                                       c->caller = std::move(caller);
                                       entry(c);
                                       return std::move(c->caller);
                                     });
  } catch (const std::exception& e) {
    // Only fails when the stack could not be mapped (memory exhausted).
    delete c;
    detail::log(log_level::Error, std::string("coroutine not created: ") + e.what());
    return nullptr;
  }
  coroutines_.emplace(c->id, c);
  coroutines_alive_.store(coroutines_.size(), std::memory_order_relaxed);
  coroutines_created_.fetch_add(1, std::memory_order_relaxed);
  stacks_cached_.store(stacks_.cached(), std::memory_order_relaxed);
  ready_.push_back(c);
  return c;
}

// Runs on the coroutine's own stack.
void machine::entry(coroutine* c) {
  machine* m = tl_machine;
  // First arrival on this stack: learn the thread stack's bounds for ASan.
  MM_ASAN_FINISH_SWITCH(nullptr, const_cast<const void**>(&m->main_stack_bottom_), &m->main_stack_size_);
  try {
    c->fn();
  } catch (const boost::context::detail::forced_unwind&) {
    throw;  // Boost.Context unwinding a fiber that is being destroyed
  } catch (const std::exception& e) {
    detail::log(log_level::Error, "coroutine '" + c->name + "' ended by exception: " + e.what());
  } catch (...) {
    detail::log(log_level::Error, "coroutine '" + c->name + "' ended by an unknown exception");
  }
  c->fn = nullptr;  // release captures on the machine, before the stack goes
  c->state = coroutine_state::Done;
  // Leaving this stack for good: no fake stack to save.
  MM_ASAN_START_SWITCH(nullptr, m->main_stack_bottom_, m->main_stack_size_);
}

void machine::make_ready(coroutine* c) {
  c->state = coroutine_state::Ready;
  ready_.push_back(c);
}

void machine::resume(coroutine* c) {
  current_ = c;
  c->state = coroutine_state::Running;
  // Single writer (this thread): a plain load+store, no locked instruction.
  context_switches_.store(context_switches_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  MM_ASAN_START_SWITCH(&main_fake_stack_, c->stack_bottom, c->stack_size);
  c->fiber = std::move(c->fiber).resume();
  MM_ASAN_FINISH_SWITCH(main_fake_stack_, nullptr, nullptr);
  current_ = nullptr;
  if (c->state == coroutine_state::Done) finish(c);
}

void machine::suspend() {
  coroutine* c = current_;
  MM_ASAN_START_SWITCH(&c->asan_fake_stack, main_stack_bottom_, main_stack_size_);
  c->caller = std::move(c->caller).resume();
  MM_ASAN_FINISH_SWITCH(c->asan_fake_stack, nullptr, nullptr);
}

void machine::finish(coroutine* c) {
  for (call* j : c->joiners) {
    // A joiner's coroutine is waiting on call j; wake it.
    // (joiners register themselves with their own call)
    j->wake();
  }
  coroutines_.erase(c->id);
  delete c;  // the fiber already returned; its stack went back to the cache
  coroutines_alive_.store(coroutines_.size(), std::memory_order_relaxed);
  stacks_cached_.store(stacks_.cached(), std::memory_order_relaxed);
}

void machine::cancel(coroutine* c) {
  if (c->state == coroutine_state::Done) return;
  c->cancelled = true;
  if (c->state == coroutine_state::Waiting && c->current_call)
    coroutine::wake(c, c->current_call, wait_status::Cancelled);
}

void machine::fire_timers() {
  while (detail::timer* t = timers_.top()) {
    if (t->deadline_ns > now_ns_) break;
    timers_.remove(t);
    call* k = t->owner;
    // The call's coroutine is waiting on k (timers are removed when a wait ends).
    if (k->coroutine_) coroutine::wake(k->coroutine_, k, wait_status::TimedOut);
  }
  timers_pending_.store(timers_.size(), std::memory_order_relaxed);
}

void machine::drain_inbox() {
  if (!inbox_pending_.load(std::memory_order_acquire)) return;
  {
    std::lock_guard lock(inbox_mutex_);
    inbox_pending_.store(false, std::memory_order_relaxed);
    if (inbox_.empty()) return;
    inbox_work_.swap(inbox_);
  }
  messages_received_.fetch_add(inbox_work_.size(), std::memory_order_relaxed);
  for (auto& msg : inbox_work_) {
    switch (msg.type) {
      case detail::inbox_message::kind::Wake: {
        coroutine* c = find(msg.coroutine);
        if (c && c->call_sequence == msg.sequence && c->current_call)
          coroutine::wake(c, c->current_call, wait_status::Ok);
        break;
      }
      case detail::inbox_message::kind::Spawn: create(msg.name, std::move(msg.fn)); break;
      case detail::inbox_message::kind::Stop:
        stopping_ = true;
        for (auto& [id, c] : coroutines_) cancel(c);
        break;
    }
  }
  inbox_work_.clear();
}

// Runs ready coroutines, those readied meanwhile included, up to a budget per
// loop turn; then the loop fires timers, drains the inbox and (at most every
// kPollIntervalNs while busy) polls the backend, so I/O is never starved.
void machine::run_ready() {
  constexpr size_t kBudget = 64;
  size_t budget = std::max(kBudget, ready_.size());
  for (size_t i = 0; i < budget && !ready_.empty(); i++) {
    coroutine* c = ready_.front();
    ready_.pop_front();
    if (c->state != coroutine_state::Ready) continue;
    resume(c);
  }
}

// While coroutines are ready, the backend is polled (without blocking) at
// most every kPollIntervalNs, so a burst of yields and wake-ups does not pay a
// syscall per turn, and I/O still waits at most that long.
void machine::run() {
  constexpr int64_t kPollIntervalNs = 50000;
  for (;;) {
    now_ns_ = detail::monotonic_ns();
    fire_timers();
    drain_inbox();
    run_ready();
    if (stopping_ && coroutines_.empty()) break;
    int64_t timeout_ns = -1;
    if (!ready_.empty()) {
      if (now_ns_ - last_poll_ns_ < kPollIntervalNs) continue;
      timeout_ns = 0;
    } else if (detail::timer* t = timers_.top()) {
      int64_t now = detail::monotonic_ns();
      timeout_ns = t->deadline_ns > now ? t->deadline_ns - now : 0;
    }
    ready_length_.store(ready_.size(), std::memory_order_relaxed);
    backend_->wait(timeout_ns);
    last_poll_ns_ = now_ns_;
    loop_iterations_.fetch_add(1, std::memory_order_relaxed);
    uring_submitted_.store(backend_->submitted(), std::memory_order_relaxed);
    uring_completed_.store(backend_->completed(), std::memory_order_relaxed);
  }
}

// ------------------------------------------------------------ public API

machine* machine_create(machine_config cfg, std::function<void()> main) {
  auto* m = new machine(std::move(cfg));
  m->main_ = std::move(main);
  std::promise<bool> started;
  auto started_future = started.get_future();
  m->thread_ = std::thread([m, &started] {
    tl_machine = m;
    // The backend is created on the machine thread: io_uring's SINGLE_ISSUER
    // binds the ring to the thread that creates it.
    m->backend_ = detail::backend_create(m->cfg_, &m->backend_reason_);
    if (!m->backend_) {
      started.set_value(false);
      return;
    }
    pthread_setname_np(pthread_self(), m->cfg_.name.substr(0, 15).c_str());
    detail::log(log_level::Info,
                "machine '" + m->cfg_.name + "': " + m->backend_->name() + " (" + m->backend_reason_ + ")");
    m->create("main", std::move(m->main_));
    started.set_value(true);
    m->run();
    detail::signal_state_free(m);
    m->backend_.reset();
    tl_machine = nullptr;
  });
  if (!started_future.get()) {
    m->thread_.join();
    detail::log(log_level::Error, "machine '" + m->cfg_.name + "' not started: " + m->backend_reason_);
    delete m;
    return nullptr;
  }
  return m;
}

void machine_stop(machine* m) { m->post(detail::inbox_message{detail::inbox_message::kind::Stop, 0, 0, {}, {}}); }

void machine_join(machine* m) {
  if (m->thread_.joinable()) m->thread_.join();
  delete m;
}

void machine_spawn(machine* m, std::string_view name, std::function<void()> fn) {
  if (m == tl_machine) {
    m->create(name, std::move(fn));
    return;
  }
  m->post(detail::inbox_message{detail::inbox_message::kind::Spawn, 0, 0, std::string(name), std::move(fn)});
}

machine* machine_self() { return tl_machine; }
const char* machine_name(const machine* m) { return m->cfg_.name.c_str(); }
const char* machine_backend_name(const machine* m) { return m->backend_ ? m->backend_->name() : "none"; }
std::string machine_backend_reason(const machine* m) { return m->backend_reason_; }

machine_counters machine_counters_get(const machine* m) {
  machine_counters c;
  c.coroutines_alive = m->coroutines_alive_.load(std::memory_order_relaxed);
  c.coroutines_created = m->coroutines_created_.load(std::memory_order_relaxed);
  c.stacks_cached = m->stacks_cached_.load(std::memory_order_relaxed);
  c.messages_received = m->messages_received_.load(std::memory_order_relaxed);
  c.loop_iterations = m->loop_iterations_.load(std::memory_order_relaxed);
  c.context_switches = m->context_switches_.load(std::memory_order_relaxed);
  c.timers_pending = m->timers_pending_.load(std::memory_order_relaxed);
  c.ready_queue = m->ready_length_.load(std::memory_order_relaxed);
  c.uring_submissions = m->uring_submitted_.load(std::memory_order_relaxed);
  c.uring_completions = m->uring_completed_.load(std::memory_order_relaxed);
  return c;
}

coroutine_id coroutine_create(std::string_view name, std::function<void()> fn) {
  coroutine* c = tl_machine->create(name, std::move(fn));
  return c ? c->id : 0;
}

coroutine_id coroutine_self() {
  coroutine* c = detail::current_coroutine();
  return c ? c->id : 0;
}

const char* coroutine_name() {
  coroutine* c = detail::current_coroutine();
  return c ? c->name.c_str() : "";
}

void coroutine_cancel(coroutine_id id) {
  if (coroutine* c = tl_machine->find(id)) tl_machine->cancel(c);
}

bool coroutine_cancelled() {
  coroutine* c = detail::current_coroutine();
  return c && c->cancelled;
}

wait_status coroutine_join(coroutine_id id, millis timeout) {
  coroutine* target = tl_machine->find(id);
  if (!target || target->state == coroutine_state::Done) return wait_status::Ok;
  call k;
  target->joiners.push_back(&k);
  wait_status s = k.wait(timeout);
  // If the target still runs (timeout or cancel), take our call off its list.
  if (coroutine* t = tl_machine->find(id)) std::erase(t->joiners, &k);
  return s;
}

bool coroutine_finish(coroutine_id id, millis timeout) {
  coroutine_cancel(id);
  const int64_t deadline = deadline_after(timeout);
  for (;;) {
    coroutine* target = tl_machine->find(id);
    if (!target || target->state == coroutine_state::Done) return true;
    if (deadline >= 0 && detail::monotonic_ns() >= deadline) return false;
    if (coroutine_cancelled()) {
      yield();  // our own waits return at once: let the target run its way out
    } else {
      coroutine_join(id, millis_until(deadline));
    }
  }
}

void yield() {
  machine* m = tl_machine;
  coroutine* c = m->current();
  m->make_ready(c);
  m->suspend();
}

wait_status sleep(millis duration) {
  call k;
  return k.wait(duration);
}

int64_t now_ns() { return tl_machine ? tl_machine->now_ns_ : detail::monotonic_ns(); }

int64_t deadline_after(millis timeout) { return timeout < 0 ? -1 : detail::monotonic_ns() + timeout * 1000000; }

millis millis_until(int64_t deadline) {
  if (deadline < 0) return kForever;
  int64_t left = deadline - detail::monotonic_ns();
  return left <= 0 ? 0 : (left + 999999) / 1000000;
}

}  // namespace mm
