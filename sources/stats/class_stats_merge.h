// `stats items` or `stats slabs` of several memcacheds as one answer: the
// router role forwards these two groups to every server of its pools
// (server/pool_inspect.h) so that memcached-tool's `display` shows the pools'
// classes, and merges the answers here. Pure. [any thread]
//
// Per class (items:N:FIELD, N:FIELD) each figure is summed over the servers
// that list the class, but for chunk_size and chunks_per_page (the class's
// shape, the same on servers started with the same -f and -n: the largest
// is kept), age, age_hot and age_warm (the oldest item anywhere: the
// largest) and evicted_time (the most recent eviction: the smallest among
// the servers whose class has evicted; the first server's if none has). Classes come in
// ascending order, a class's fields in the order its first server gave
// them. After them the lines without a class: active_slabs is the number of
// classes listed, every other one (total_malloced, ...) the sum, in the
// first server's order. A value that is not a number is kept from the first
// server that gave it.
#pragma once

#include <vector>

#include "stats_provider.h"

namespace ithaca::stats {

stat_lines merge_class_stats(const std::vector<stat_lines>& answers);

}  // namespace ithaca::stats
