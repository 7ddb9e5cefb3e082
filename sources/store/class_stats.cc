#include "class_stats.h"

#include <algorithm>
#include <new>

namespace ithaca::store {

namespace {

std::atomic<unsigned> g_next_shard{0};

}  // namespace

class_stats::class_stats()
{
    // calloc (untouched pages stay the kernel's zero pages), one line extra so the shards
    // can start on a cache-line boundary: no two shards share a line.
    void* p = std::calloc(kShards * kShardCells + 64 / sizeof(int64_t), sizeof(int64_t));
    if (!p)
        throw std::bad_alloc();
    raw_.reset(p);
    const auto addr = reinterpret_cast<uintptr_t>(p);
    cells_ = reinterpret_cast<int64_t*>((addr + 63) & ~uintptr_t{63});
}

unsigned class_stats::my_shard() noexcept
{
    thread_local const unsigned shard =
        g_next_shard.fetch_add(1, std::memory_order_relaxed) % kShards;
    return shard;
}

class_stats_snapshot class_stats::snapshot() const noexcept
{
    class_stats_snapshot s;
    for (unsigned cls = 0; cls < kSlabClassMax; ++cls) {
        int64_t sum[kClassCounters] = {};
        for (unsigned sh = 0; sh < kShards; ++sh) {
            for (unsigned c = 0; c < kClassCounters; ++c) {
                sum[c] += std::atomic_ref<int64_t>(cell(sh, cls, static_cast<class_counter>(c)))
                              .load(std::memory_order_relaxed);
            }
        }
        class_figures& f = s.cls[cls];
#define X(name) \
    f.name = static_cast<uint64_t>(std::max<int64_t>(sum[static_cast<unsigned>(class_counter::name)], 0));
        ITHACA_CLASS_COUNTERS(X)
#undef X
        f.evicted_time = evicted_time_[cls].load(std::memory_order_relaxed);
        f.oldest_atime = oldest_atime_[cls].load(std::memory_order_relaxed);
    }
    return s;
}

}  // namespace ithaca::store
