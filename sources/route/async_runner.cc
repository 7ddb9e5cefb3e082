#include "async_runner.h"

#include "route.h"

namespace ithaca::route {

namespace {

std::size_t request_bytes(const protocol::request& r) {
  std::size_t n = r.value.size();
  for (std::size_t i = 0; i < r.keys.size(); ++i) n += r.keys[i].size();
  return n;
}

}  // namespace

async_totals& async_counters() {
  static async_totals totals;
  return totals;
}

async_runner::async_runner(proxy::worker_backends* backends) : backends_(backends) {}

// Detached requests still in flight free themselves when their backend
// connections fail them (the worker's backends go after this runner's users,
// before it: worker.h declares the runner first).
// Timed steps still armed (the coroutine never ran) end here: their slots
// are orphans by now, which free themselves.
async_runner::~async_runner() { timers_.fire_all(); }

bool async_runner::delay(flow::request_slot& s, mm::millis wait) {
  if (stopped_) return false;
  const std::int64_t deadline = mm::deadline_after(wait);
  if (!timers_.arm(s, deadline)) return false;
  // An earlier deadline than the coroutine sleeps for: it must wake first.
  if (running_ && sleep_until_ >= 0 && deadline < sleep_until_) wake_.wake();
  return true;
}

bool async_runner::send(const route& r, const protocol::request& req, bool shadow) {
  const std::size_t bytes = request_bytes(req);
  if (stopped_ || in_flight_ >= kMaxRequests || bytes_ + bytes > kMaxBytes) {
    async_counters().dropped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  std::unique_ptr<flow::request_slot> owned = flow::request_slot::detached(req, *this);
  flow::request_slot& s = *owned.release();  // frees itself: finished()
  s.shadow = shadow;
  ++in_flight_;
  bytes_ += bytes;
  async_counters().sent.fetch_add(1, std::memory_order_relaxed);
  dispatch_env env{nullptr, nullptr, s.deferred, backends_, nullptr, this};
  s.begin_dispatch();
  if (r.dispatch(s, env) == dispatch_status::Done) {
    // A route that answers at once (an error route): nothing was sent.
    s.abandon_dispatch();
    finished(s);
    return true;
  }
  s.end_dispatch();
  return true;
}

void async_runner::adopt(std::unique_ptr<flow::request_slot> child) {
  for (std::unique_ptr<flow::request_slot>& straggler : child->detach_to(*this)) adopt(std::move(straggler));
  if (!child->is_detached()) return;         // nothing left to send: freed here
  flow::request_slot& s = *child.release();  // frees itself: finished()
  ++in_flight_;
  bytes_ += request_bytes(s.req);
  async_counters().sent.fetch_add(1, std::memory_order_relaxed);
}

void async_runner::cancel_resume(flow::request_slot& s) {
  for (flow::request_slot*& p : resumes_) {
    if (p == &s) p = nullptr;
  }
}

void async_runner::resume_later(flow::request_slot& s) {
  resumes_.push_back(&s);
  if (running_) wake_.wake();
}

void async_runner::finished(flow::request_slot& s) {
  --in_flight_;
  bytes_ -= request_bytes(s.req);
  async_counters().done.fetch_add(1, std::memory_order_relaxed);
  delete &s;
}

void async_runner::run() {
  running_ = true;
  std::vector<flow::request_slot*> batch;
  for (;;) {
    timers_.fire_due(mm::deadline_after(0));
    while (!resumes_.empty()) {
      batch.swap(resumes_);
      for (flow::request_slot* s : batch) {
        if (s == nullptr) continue;  // cancelled
        dispatch_env env{nullptr, nullptr, s->deferred, backends_, nullptr, this};
        resume_slot(*s, env);
      }
      batch.clear();
    }
    // Until the next timed step is due, a resume, or a second at most.
    const std::int64_t next = timers_.next_deadline();
    const std::int64_t second = mm::deadline_after(1000);
    sleep_until_ = next >= 0 && next < second ? next : second;
    const mm::wait_status w = wake_.wait_until(sleep_until_);
    sleep_until_ = -1;
    if (w == mm::wait_status::Cancelled) break;
  }
  running_ = false;
  stopped_ = true;
  // Every timed step ends now: its slot goes on (a client's is resumed by
  // its client; one of ours is finished below with what it has).
  timers_.fire_all();
  // The worker stops: a composite waiting here ends with what it has.
  for (flow::request_slot* s : resumes_) {
    if (s == nullptr) continue;
    while (s->has_frames()) s->pop_frame();
    s->finish();
  }
  resumes_.clear();
}

}  // namespace ithaca::route
