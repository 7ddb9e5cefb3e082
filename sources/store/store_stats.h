// store_stats: the store's counters. Relaxed atomics, updated by any thread, with or without
// a bucket lock (they are lock-free, so allowed under it). cmd_* counts are the server's.
// An evicted large item counts in `evictions` and in one of large_value_gc_evictions (the GC
// sweep evicted it) or large_value_inline_evictions (a store evicted it to make room).
#pragma once

#include <atomic>
#include <cstdint>

namespace ithaca::store {

#define ITHACA_STORE_STATS(X)                                                          \
    X(curr_items) X(total_items) X(bytes) X(evictions) X(expired_unfetched)            \
    X(evicted_unfetched) X(reclaimed) X(get_hits) X(get_misses) X(get_expired)         \
    X(get_flushed) X(delete_hits) X(delete_misses) X(incr_hits) X(incr_misses)         \
    X(decr_hits) X(decr_misses) X(cas_hits) X(cas_misses) X(cas_badval) X(touch_hits)  \
    X(touch_misses) X(lease_tokens) X(lease_waits) X(lease_placeholders)               \
    X(large_values) X(large_value_errors) X(large_value_gc_evictions)                   \
    X(large_value_inline_evictions) X(out_of_memory)

struct store_stats_snapshot {
#define X(name) uint64_t name = 0;
    ITHACA_STORE_STATS(X)
#undef X
};

struct store_stats {
#define X(name) std::atomic<int64_t> name{0};
    ITHACA_STORE_STATS(X)
#undef X

    store_stats_snapshot snapshot() const noexcept
    {
        store_stats_snapshot s;
#define X(name) s.name = static_cast<uint64_t>(name.load(std::memory_order_relaxed));
        ITHACA_STORE_STATS(X)
#undef X
        return s;
    }
};

inline void bump(std::atomic<int64_t>& c, int64_t n = 1) noexcept
{
    c.fetch_add(n, std::memory_order_relaxed);
}

}  // namespace ithaca::store
