// A backend connection's queue of calls waiting to be sent (over the
// in-flight cap, or before the connection is up) that keeps a gauge of the
// worker's counters (server_counters::pending) equal to the calls queued,
// summed over the worker's connections to the server: mcrouter's
// pending_reqs in `stats servers`. Only the methods backend_conn uses.
// [the connection's worker only; the gauge is read by any thread]
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>

namespace ithaca::proxy {

template <class T>
class gauged_queue {
 public:
  explicit gauged_queue(std::atomic<int64_t>& gauge) : gauge_(gauge) {}
  gauged_queue(const gauged_queue&) = delete;
  gauged_queue& operator=(const gauged_queue&) = delete;
  ~gauged_queue() { add(-static_cast<int64_t>(q_.size())); }

  bool empty() const { return q_.empty(); }
  std::size_t size() const { return q_.size(); }
  T& front() { return q_.front(); }
  void push_back(const T& v) {
    q_.push_back(v);
    add(1);
  }
  void pop_front() {
    q_.pop_front();
    add(-1);
  }
  // Replaces the queue's contents with `other`'s (and `other` gets them).
  void swap(std::deque<T>& other) {
    add(static_cast<int64_t>(other.size()) - static_cast<int64_t>(q_.size()));
    q_.swap(other);
  }
  auto begin() { return q_.begin(); }
  auto end() { return q_.end(); }

 private:
  void add(int64_t n) { gauge_.fetch_add(n, std::memory_order_relaxed); }
  std::deque<T> q_;
  std::atomic<int64_t>& gauge_;
};

}  // namespace ithaca::proxy
