// class_stats: the store's counters per memcached size class (slab_classes.h), for
// `stats slabs`, `stats items` and the exporter's memcached_slab_* / memcached_items_*.
//
// Why shards: the get path bumps get_hits of the item's class on every hit. One shared
// array would put every worker's hits of a popular class on one cache line, bounced
// between cores on each hit (the store's global store_stats already pay that for a few
// counters; this adds none). So each thread writes its own shard: a thread takes the next
// shard index the first time it counts (thread_local), and with up to kShards threads
// (workers, cron, pooler) no two share one. Beyond that two threads share a shard; still
// correct (relaxed fetch_add), only no longer private. Readers (`stats`, the metrics page,
// rare) sum the shards. Gauges (number, mem_requested, used_chunks) are the sum of +1/-1
// made on whichever thread linked or unlinked an item, so a shard's own value may be
// negative; the sum is right once the writers are done, and a reader racing them clamps at 0.
//
// The memory is calloc'd and every counter is a plain int64_t updated with
// std::atomic_ref, so a store that counts nothing costs no touched pages (a router, the
// fuzz target's many stores).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "slab_classes.h"

namespace ithaca::store {

// Event counters are cumulative (`stats reset` keeps a baseline); gauges are current.
#define ITHACA_CLASS_GAUGES(X) X(number) X(mem_requested) X(used_chunks)
#define ITHACA_CLASS_EVENTS(X)                                                            \
    X(get_hits) X(cmd_set) X(delete_hits) X(incr_hits) X(decr_hits) X(cas_hits)           \
    X(cas_badval) X(touch_hits) X(evicted) X(evicted_nonzero) X(evicted_unfetched)        \
    X(outofmemory) X(reclaimed) X(expired_unfetched) X(crawler_reclaimed)                 \
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
    static constexpr unsigned kShards = 16;

    class_stats();

    void add(unsigned cls, class_counter c, int64_t n = 1) noexcept
    {
        std::atomic_ref<int64_t>(cell(my_shard(), cls, c)).fetch_add(n, std::memory_order_relaxed);
    }
    // Last-value figures: rare events (an eviction, the end of a GC pass), one shared slot.
    void set_evicted_time(unsigned cls, uint32_t secs) noexcept
    {
        evicted_time_[cls].store(secs, std::memory_order_relaxed);
    }
    void set_oldest_atime(unsigned cls, uint32_t sec) noexcept
    {
        oldest_atime_[cls].store(sec, std::memory_order_relaxed);
    }

    class_stats_snapshot snapshot() const noexcept;

private:
    struct free_deleter {
        void operator()(void* p) const noexcept { std::free(p); }
    };
    // One shard: every class's counters, padded to whole cache lines.
    static constexpr size_t kShardCells =
        (kSlabClassMax * kClassCounters * sizeof(int64_t) + 63) / 64 * 64 / sizeof(int64_t);

    static unsigned my_shard() noexcept;
    int64_t& cell(unsigned shard, unsigned cls, class_counter c) const noexcept
    {
        return cells_[shard * kShardCells + cls * kClassCounters + static_cast<unsigned>(c)];
    }

    std::unique_ptr<void, free_deleter> raw_;  // the calloc'd block
    int64_t* cells_ = nullptr;                 // kShards * kShardCells in raw_, 64-aligned
    std::array<std::atomic<uint32_t>, kSlabClassMax> evicted_time_{};
    std::array<std::atomic<uint32_t>, kSlabClassMax> oldest_atime_{};
};

}  // namespace ithaca::store
