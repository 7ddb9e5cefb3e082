// Every open client connection, for `stats conns` and the connection limit.
// Any worker thread adds and removes its own connections; `stats conns` reads.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>

namespace ithaca::server {

struct conn_info {
  std::string address;   // "tcp:127.0.0.1:5000" / "unix:/path"
  std::string listener;  // the local address it came in on
  int64_t since_s = 0;   // server uptime when accepted
};

class conn_registry {
 public:
  uint64_t add(conn_info info);  // returns the connection's id
  void remove(uint64_t id);
  template <class F>
  void for_each(F&& f) const {
    std::lock_guard lock(mutex_);
    for (auto& [id, info] : conns_) f(id, info);
  }
  uint64_t current() const { return current_.load(std::memory_order_relaxed); }
  uint64_t total() const { return total_.load(std::memory_order_relaxed); }

  // Counted by the pooler when it turns a connection away (max_connections).
  std::atomic<uint64_t> rejected{0};
  // Reserved by the pooler before handing a socket to a worker, so that the
  // limit holds even while sockets are in flight on the channel.
  std::atomic<uint64_t> reserved{0};

  // A counter of the open clients of one listener with a client limit of its
  // own (twemproxy's client_connections): the pooler adds one before it hands
  // a socket over, whoever ends that socket (its client, or the worker
  // draining its queue) takes it back. Stable for the registry's life, which
  // outlives the pooler and every worker. [pooler machine, at start-up]
  std::atomic<uint64_t>* new_listener_counter() { return &listener_counts_.emplace_back(0); }

 private:
  mutable std::mutex mutex_;  // leaf lock: guards conns_; held for a map insert/erase only
  std::map<uint64_t, conn_info> conns_;
  uint64_t next_id_ = 1;  // [mutex_]
  std::atomic<uint64_t> current_{0};
  std::atomic<uint64_t> total_{0};
  std::deque<std::atomic<uint64_t>> listener_counts_;  // grown at start-up only; elements never move
};

}  // namespace ithaca::server
