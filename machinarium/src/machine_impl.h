// The machine: a pthread running the scheduler loop over its backend.
// Fields are owned by the machine thread unless marked otherwise.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "backend.h"
#include "coroutine.h"
#include "machinarium.h"
#include "stack.h"
#include "timer.h"

namespace mm {

namespace detail {
// A message from another thread to a machine (its inbox).
struct inbox_message {
  enum class kind { Wake, Spawn, Stop } type;
  coroutine_id coroutine = 0;  // Wake: whom
  uint64_t sequence = 0;       // Wake: which wait
  std::string name;            // Spawn
  std::function<void()> fn;    // Spawn
};
}  // namespace detail

class machine {
 public:
  explicit machine(machine_config cfg);
  ~machine();

  // Thread-safe: queue a message; the event fd is written only when the inbox
  // goes from empty to non-empty (coalesced wake-ups).
  void post(detail::inbox_message msg);

  // Machine thread only.
  detail::coroutine* create(std::string_view name, std::function<void()> fn);
  void make_ready(detail::coroutine* c);
  void suspend();  // switch from the running coroutine to the scheduler
  void cancel(detail::coroutine* c);
  detail::coroutine* find(coroutine_id id) const;
  detail::coroutine* current() const { return current_; }
  void run();  // the scheduler loop; returns when stopped and empty

  machine_config cfg_;
  std::thread thread_;
  std::unique_ptr<detail::backend> backend_;
  std::string backend_reason_;
  detail::stack_cache stacks_;
  detail::timer_heap timers_;
  int64_t now_ns_ = 0;
  bool stopping_ = false;
  std::function<void()> main_;
  struct signal_state* signals_ = nullptr;  // signal_wait() on this machine

  // Counters: written by the machine thread, read from any thread.
  std::atomic<uint64_t> coroutines_alive_{0};
  std::atomic<uint64_t> coroutines_created_{0};
  std::atomic<uint64_t> stacks_cached_{0};
  std::atomic<uint64_t> messages_received_{0};
  std::atomic<uint64_t> loop_iterations_{0};
  std::atomic<uint64_t> context_switches_{0};
  std::atomic<uint64_t> timers_pending_{0};
  std::atomic<uint64_t> ready_length_{0};     // after the last turn's run_ready()
  std::atomic<uint64_t> uring_submitted_{0};  // the backend's, copied after each wait()
  std::atomic<uint64_t> uring_completed_{0};

 private:
  void run_ready();
  void fire_timers();
  void drain_inbox();
  void resume(detail::coroutine* c);
  void finish(detail::coroutine* c);
  static void entry(detail::coroutine* c);

  std::unordered_map<coroutine_id, detail::coroutine*> coroutines_;
  std::deque<detail::coroutine*> ready_;
  detail::coroutine* current_ = nullptr;
  void* main_stack_bottom_ = nullptr;  // the thread's own stack (ASan)
  size_t main_stack_size_ = 0;
  void* main_fake_stack_ = nullptr;

  std::mutex inbox_mutex_;  // leaf lock: protects inbox_ only
  std::vector<detail::inbox_message> inbox_;
  // Set under inbox_mutex_ when inbox_ becomes non-empty; read without the
  // lock so an idle inbox costs one relaxed load per loop turn.
  std::atomic<bool> inbox_pending_{false};
  int64_t last_poll_ns_ = 0;                       // when the backend was last asked for events
  std::vector<detail::inbox_message> inbox_work_;  // machine thread only
};

namespace detail {
machine* current_machine();  // thread-local; nullptr off-machine
coroutine* current_coroutine();
int64_t monotonic_ns();  // clock_gettime, uncached
void log(log_level level, std::string_view message);
// Wakes the wait `sequence` of coroutine `id` on machine `m` (any thread).
void post_wake(machine* m, coroutine_id id, uint64_t sequence);
void signal_state_free(machine* m);
}  // namespace detail

}  // namespace mm
