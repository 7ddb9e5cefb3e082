// One worker's detached requests: what a route sends without a client
// waiting for it (all_async's children, all_initial's and all_majority's
// stragglers, shadow copies, warm-up fills). Each is a detached slot that
// owns a copy of its request (flow::request_slot::detached) and frees
// itself when done; composites among them are resumed by this worker's
// "async" coroutine, as a client's are by the client.
//
// Bound: at most kMaxRequests detached requests and kMaxBytes of their
// copied keys and values in flight per worker. Past it a new one is dropped
// and counted (`stats routes`: async_dropped): a slow or dead replica never
// grows the router, and never slows the client whose request it copies.
//
// Order: detached requests share one client tag per worker, so those sent to
// one server go out on one connection in the order they were made (a set then
// a delete of the same key reach the replica in that order).
//
// Thread: the worker machine only (routes send, backend readers finish, the
// coroutine resumes). Counters are read by `stats` on any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "machinarium.h"
#include "request.h"
#include "request_slot.h"
#include "step_timers.h"

namespace ithaca::proxy {
class worker_backends;
}

namespace ithaca::route {

class route;

// Server-wide totals of every worker's runner (stats routes).
struct async_totals {
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> dropped{0};
  std::atomic<std::uint64_t> done{0};
};
async_totals& async_counters();

class async_runner final : public flow::slot_home {
 public:
  static constexpr std::size_t kMaxRequests = 4096;
  static constexpr std::size_t kMaxBytes = 64u << 20;

  explicit async_runner(proxy::worker_backends* backends);
  ~async_runner();
  async_runner(const async_runner&) = delete;
  async_runner& operator=(const async_runner&) = delete;

  // Sends a detached copy of `req` through `r`. False when the worker's bound
  // is reached or the runner has stopped (counted as dropped). `shadow`:
  // a shadow's copy (request_slot::shadow).
  bool send(const route& r, const protocol::request& req, bool shadow = false);

  // Takes a straggler child (flow::request_slot::release_child) still in
  // flight: it is finished as a detached request (counted, not bounded: it
  // is already out). A child that only waited to be resumed is dropped.
  void adopt(std::unique_ptr<flow::request_slot> child);

  // Holds `s` for `wait` (a timed step, step_timers.h): one call of its own
  // that the "async" coroutine ends at the deadline, or at once when the
  // worker stops; the slot's home then resumes its top frame. False (no
  // call added) when the runner has stopped or step_timers' bound is
  // reached: the caller goes on without waiting.
  bool delay(flow::request_slot& s, mm::millis wait);

  // flow::slot_home
  void resume_later(flow::request_slot& s) override;
  void finished(flow::request_slot& s) override;
  void cancel_resume(flow::request_slot& s) override;

  // The coroutine "async": resumes composites among the detached requests
  // and ends the timed steps at their deadlines, until cancelled (the worker
  // stops).
  void run();

  std::size_t in_flight() const { return in_flight_; }

 private:
  proxy::worker_backends* backends_;
  std::vector<flow::request_slot*> resumes_;
  step_timers timers_;
  std::int64_t sleep_until_ = -1;  // the deadline run() waits for; -1: not waiting
  std::size_t in_flight_ = 0;
  std::size_t bytes_ = 0;
  bool running_ = false;
  bool stopped_ = false;
  mm::call wake_;
};

}  // namespace ithaca::route
