#include "class_stats.h"

#include <algorithm>

namespace ithaca::store {

class_stats_snapshot class_stats::snapshot() const noexcept {
  class_stats_snapshot s;
  for (unsigned cls = 0; cls < kSlabClassMax; ++cls) {
    int64_t sum[kClassCounters];
    for (unsigned c = 0; c < kClassCounters; ++c) sum[c] = shards_.sum(cell(cls, static_cast<class_counter>(c)));
    class_figures& f = s.cls[cls];
#define X(name) f.name = static_cast<uint64_t>(std::max<int64_t>(sum[static_cast<unsigned>(class_counter::name)], 0));
    ITHACA_CLASS_COUNTERS(X)
#undef X
    f.seen = seen_[cls].load(std::memory_order_relaxed);
    f.evicted_time = evicted_time_[cls].load(std::memory_order_relaxed);
    f.oldest_atime = oldest_atime_[cls].load(std::memory_order_relaxed);
  }
  return s;
}

uint64_t class_stats::total(class_counter c) const noexcept {
  int64_t sum = 0;
  for (unsigned cls = 0; cls < kSlabClassMax; ++cls) sum += shards_.sum(cell(cls, c));
  return static_cast<uint64_t>(std::max<int64_t>(sum, 0));
}

}  // namespace ithaca::store
