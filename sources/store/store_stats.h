// store_stats: the store's counters. `bytes` is the memory charge, one shared relaxed atomic:
// every store compares it with the limit. Every other counter is bumped on the request path
// and only read by `stats` and the metrics page, so it lives in counter_shards (one shard per
// thread, no locked instruction; the snapshot sums). Any thread may count, with or without a
// bucket lock (neither waits). cmd_* counts are the server's.
// An evicted large item counts in `evictions` and in one of large_value_gc_evictions (the GC
// sweep evicted it) or large_value_inline_evictions (a store evicted it to make room).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "counter_shards.h"

namespace ithaca::store {

// Everything but `bytes`.
#define ITHACA_STORE_COUNTERS(X)                                                                                    \
  X(curr_items)                                                                                                     \
  X(total_items)                                                                                                    \
  X(evictions) X(expired_unfetched) X(evicted_unfetched) X(reclaimed) X(get_hits) X(get_misses) X(get_expired)      \
      X(get_flushed) X(delete_hits) X(delete_misses) X(incr_hits) X(incr_misses) X(decr_hits) X(decr_misses)        \
          X(cas_hits) X(cas_misses) X(cas_badval) X(touch_hits) X(touch_misses) X(lease_tokens) X(lease_waits)      \
              X(lease_placeholders) X(large_values) X(large_value_errors) X(large_value_gc_evictions)               \
                  X(large_value_inline_evictions) X(out_of_memory) X(small_items) X(moves_to_warm) X(moves_to_cold) \
                      X(moves_within_lru) X(ghost_hits)

// s3fifo (store.h): small_items and small_bytes are the small queue's items and their
// memory charge (main holds the rest); moves_to_warm counts items that reached the small
// queue's end after a read and went on to main, moves_to_cold those pushed on to main
// unread because the queue's ring was full, moves_within_lru main's second chances (the
// hand passed an item read since, and left it), ghost_hits the stores of a key the small
// queue had evicted lately (straight to main).
struct store_stats_snapshot {
  uint64_t bytes = 0;
  uint64_t small_bytes = 0;
#define X(name) uint64_t name = 0;
  ITHACA_STORE_COUNTERS(X)
#undef X
};

enum class store_counter : unsigned {
#define X(name) name,
  ITHACA_STORE_COUNTERS(X)
#undef X
      kCount
};

class store_stats {
 public:
  store_stats() : shards_(static_cast<size_t>(store_counter::kCount)) {}

  void add(store_counter c, int64_t n = 1) noexcept { shards_.add(static_cast<size_t>(c), n); }

  // One counter's sum (a reader racing writers may see a gauge below 0: clamped).
  uint64_t count(store_counter c) const noexcept {
    return static_cast<uint64_t>(std::max<int64_t>(shards_.sum(static_cast<size_t>(c)), 0));
  }

  store_stats_snapshot snapshot() const noexcept {
    store_stats_snapshot s;
    s.bytes = static_cast<uint64_t>(std::max<int64_t>(bytes.load(std::memory_order_relaxed), 0));
#define X(name) s.name = count(store_counter::name);
    ITHACA_STORE_COUNTERS(X)
#undef X
    return s;
  }

  std::atomic<int64_t> bytes{0};  // the memory charge (item_mem of every charged item)

 private:
  counter_shards shards_;
};

}  // namespace ithaca::store
