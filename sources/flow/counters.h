// Counters with one writer (the worker thread that owns them) and any number
// of readers (`stats` on any thread). A relaxed load+store is enough for one
// writer and avoids a locked read-modify-write on the hot path.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ithaca::flow {

class counter {
 public:
  void add(uint64_t n = 1) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }
  void reset() { v_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

// What one worker counts while executing commands (memcached's per-thread
// stats). The store counts hits, misses, evictions and items itself.
struct command_counters {
  counter cmd_get;       // keys requested by get/gets/gat/gats/mg/binary get
  counter cmd_set;       // set-like commands, incl. failed ones (memcached)
  counter cmd_flush;
  counter cmd_touch;
  counter cmd_meta;      // meta commands
  counter get_flushed;
  counter bytes_read;    // from clients
  counter bytes_written; // to clients
  counter lease_tokens_issued;
  counter lease_waits;
  counter lease_sets_refused;
  counter parse_errors;  // CLIENT_ERROR / ERROR replies caused by bad input
  counter udp_requests;  // UDP datagrams accepted and executed
  counter udp_dropped;   // UDP datagrams dropped: bad frame, truncated, reply too long or not sent
  counter idle_kicks;    // connections closed by the idle timeout (memcached's idle_kicks)

  // How many counters for_each visits (the stats baselines are sized by it).
  static constexpr size_t kCount = 15;

  template <class F>
  void for_each(F&& f) {
    f(cmd_get); f(cmd_set); f(cmd_flush); f(cmd_touch); f(cmd_meta); f(get_flushed);
    f(bytes_read); f(bytes_written); f(lease_tokens_issued); f(lease_waits);
    f(lease_sets_refused); f(parse_errors); f(udp_requests); f(udp_dropped); f(idle_kicks);
  }
};
// A counter added to the struct must be added to for_each and kCount too.
static_assert(sizeof(command_counters) == command_counters::kCount * sizeof(counter));

}  // namespace ithaca::flow
