// class_stats: the store's counters per memcached size class (slab_classes.h), for
// `stats slabs`, `stats items` and the exporter's memcached_slab_* / memcached_items_*.
//
// The counts are written on every hit and every link and unlink, so they live in
// counter_shards (one shard per thread, no locked instruction; readers sum).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "counter_shards.h"
#include "slab_classes.h"

namespace ithaca::store {

// Event counters are cumulative (`stats reset` keeps a baseline); gauges are current.
#define ITHACA_CLASS_GAUGES(X) X(number) X(mem_requested) X(used_chunks)
#define ITHACA_CLASS_EVENTS(X)                                                                                      \
  X(get_hits)                                                                                                       \
  X(cmd_set) X(delete_hits) X(incr_hits) X(decr_hits) X(cas_hits) X(cas_badval) X(touch_hits) X(evicted)            \
      X(evicted_nonzero) X(evicted_unfetched) X(outofmemory) X(reclaimed) X(expired_unfetched) X(crawler_reclaimed) \
          X(crawler_items_checked) X(direct_reclaims)
#define ITHACA_CLASS_COUNTERS(X) ITHACA_CLASS_GAUGES(X) ITHACA_CLASS_EVENTS(X)

enum class class_counter : unsigned {
#define X(name) name,
  ITHACA_CLASS_COUNTERS(X)
#undef X
      kCount
};

inline constexpr unsigned kClassCounters = static_cast<unsigned>(class_counter::kCount);

// One class's figures, summed over the shards.
struct class_figures {
#define X(name) uint64_t name = 0;
  ITHACA_CLASS_COUNTERS(X)
#undef X
  // The class has held an item since the start: memcached then has a page in it, which
  // it keeps after the items go (its `stats slabs` lists the class for good).
  bool seen = false;
  uint32_t evicted_time = 0;  // seconds since the last access of the last item evicted
  // Server seconds (store_time.h) of the least recent access seen in the class by the
  // last complete GC pass; 0 = none seen.
  uint32_t oldest_atime = 0;
};

struct class_stats_snapshot {
  std::array<class_figures, kSlabClassMax> cls{};
};

class class_stats {
 public:
  class_stats() : shards_(kSlabClassMax * kClassCounters) {}

  void add(unsigned cls, class_counter c, int64_t n = 1) noexcept { shards_.add(cell(cls, c), n); }
  // Last-value figures: rare events (an eviction, the end of a GC pass), one shared slot.
  void set_evicted_time(unsigned cls, uint32_t secs) noexcept {
    evicted_time_[cls].store(secs, std::memory_order_relaxed);
  }
  void set_oldest_atime(unsigned cls, uint32_t sec) noexcept {
    oldest_atime_[cls].store(sec, std::memory_order_relaxed);
  }
  // A chunk of `cls` is in use (an item linked). Written once per class for the life of
  // the store, read on every link: the line stays shared, never bounces.
  void mark_seen(unsigned cls) noexcept {
    if (!seen_[cls].load(std::memory_order_relaxed)) seen_[cls].store(true, std::memory_order_relaxed);
  }

  class_stats_snapshot snapshot() const noexcept;
  // One counter summed over every class (a reader racing writers: clamped at 0).
  uint64_t total(class_counter c) const noexcept;

 private:
  static size_t cell(unsigned cls, class_counter c) noexcept { return cls * kClassCounters + static_cast<unsigned>(c); }

  counter_shards shards_;
  std::array<std::atomic<uint32_t>, kSlabClassMax> evicted_time_{};
  std::array<std::atomic<uint32_t>, kSlabClassMax> oldest_atime_{};
  std::array<std::atomic<bool>, kSlabClassMax> seen_{};
};

}  // namespace ithaca::store
