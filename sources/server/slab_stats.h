// `stats slabs` and `stats items` from the store's per-class figures (store/class_stats.h),
// in memcached 1.6.45's field names and order (slabs.c do_slabs_stats, items.c item_stats
// with its LRU maintainer on, as memcached runs by default). INTERNALS.md ("The store",
// "Size classes") says how each figure maps to ithaca's store. Pure. [any thread]
#pragma once

#include <cstdint>

#include "class_stats.h"
#include "slab_classes.h"
#include "stats_provider.h"

namespace ithaca::server {

// Event counters are reported since `base` (the `stats reset` baseline); gauges as they are.
// `total_malloced`: the store's memory charge (its items' region blocks: what the -m limit
// bounds, as memcached's total_malloced is what its -m limit bounds).
void slab_stat_lines(const store::slab_classes& classes, const store::class_stats_snapshot& now,
                     const store::class_stats_snapshot& base, uint64_t total_malloced, stats::stat_lines& out);

// `now_sec`: the store's current server second (store_time.h), for `age`.
void item_stat_lines(const store::class_stats_snapshot& now, const store::class_stats_snapshot& base, uint32_t now_sec,
                     stats::stat_lines& out);

}  // namespace ithaca::server
