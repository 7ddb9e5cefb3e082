// Counters with one writer (the worker thread that owns them) and any number
// of readers (`stats` on any thread). A relaxed load+store is enough for one
// writer and avoids a locked read-modify-write on the hot path.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ithaca::stats {

// A relaxed read of a shared counter (the stats tables' `load(x)`).
inline uint64_t load(const std::atomic<uint64_t>& v) { return v.load(std::memory_order_relaxed); }

class counter {
 public:
  void add(uint64_t n = 1) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }
  void reset() { v_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

// What one worker counts while executing commands (memcached's per-thread
// stats), one line per counter: `stats` (server_stats.cc) sums them by name.
// The local store counts its hits, misses, evictions, items, get_flushed and
// the lease tokens and waits itself (store_stats.h); what a
// backend server answered a routed request is counted here, by the outcome
// the client got (routed_counts.cc), as memcached would have counted it.
#define ITHACA_COMMAND_COUNTERS(X)                                                                                \
  X(cmd_get) /* keys requested by get/gets/mg/binary get (local or routed) */                                     \
  X(cmd_set) /* set-like commands, incl. failed ones (memcached) */                                               \
  X(cmd_flush)                                                                                                    \
  X(cmd_touch)     /* touch, and each key of gat/gats/mg T/binary touch */                                        \
  X(cmd_meta)      /* meta commands */                                                                            \
  X(bytes_read)    /* from clients */                                                                             \
  X(bytes_written) /* to clients */                                                                               \
  X(lease_sets_refused)                                                                                           \
  X(parse_errors) /* CLIENT_ERROR / ERROR replies caused by bad input */                                          \
  X(udp_requests) /* UDP datagrams accepted and executed */                                                       \
  X(udp_dropped)  /* UDP datagrams dropped: bad frame, truncated, reply too long or not sent */                   \
  X(idle_kicks)   /* connections closed by the idle timeout (memcached's idle_kicks) */                           \
  X(conn_yields)  /* a connection let others go first after reqs_per_event requests (memcached -R) */             \
  X(auth_cmds)    /* -S / -Y authentication attempts answered (memcached's auth_cmds) */                          \
  X(auth_errors)  /* ... of them refused (memcached's auth_errors) */                                             \
  /* Routed requests: the backend's answer, as memcached's hit/miss counters (added to the store's). */           \
  X(routed_get_hits)                                                                                              \
  X(routed_get_misses)                                                                                            \
  X(routed_touch_hits) X(routed_touch_misses) X(routed_delete_hits) X(routed_delete_misses) X(routed_incr_hits)   \
      X(routed_incr_misses) X(routed_decr_hits) X(routed_decr_misses) X(routed_cas_hits) X(routed_cas_misses)     \
          X(routed_cas_badval) /* Requests by mcrouter's request type (its cmd_TYPE_count; mcrouter_counts.h). */ \
      X(mc_add) X(mc_append) X(mc_cas) X(mc_decr) X(mc_delete) X(mc_flushall) X(mc_gat) X(mc_gats) X(mc_get)      \
          X(mc_gets) X(mc_incr) X(mc_lease_get) X(mc_lease_set) X(mc_prepend) X(mc_replace) X(mc_set) X(mc_touch)

// Each counter's index in for_each's order (server_stats keeps baselines by it).
enum class command_counter : std::size_t {
#define ITHACA_X(name) name,
  ITHACA_COMMAND_COUNTERS(ITHACA_X)
#undef ITHACA_X
      kCount
};

struct command_counters {
#define ITHACA_X(name) counter name;
  ITHACA_COMMAND_COUNTERS(ITHACA_X)
#undef ITHACA_X

  // How many counters for_each visits (the stats baselines are sized by it).
  static constexpr size_t kCount = static_cast<size_t>(command_counter::kCount);

  template <class F>
  void for_each(F&& f) {
#define ITHACA_X(name) f(name);
    ITHACA_COMMAND_COUNTERS(ITHACA_X)
#undef ITHACA_X
  }
};
static_assert(sizeof(command_counters) == command_counters::kCount * sizeof(counter));

}  // namespace ithaca::stats
