#include "watch_evictions.h"

#include "store_time.h"
#include "watch_events.h"

namespace ithaca::server {

void watch_evictions::on_evict(const store::evicted_item& item) noexcept {
  if (!stats::watch::watching(stats::watch::kEvictions)) return;
  const uint32_t sec = store::server_sec(clock_.now());
  const int64_t la = item.atime < sec ? int64_t{sec} - item.atime : 0;
  stats::watch::eviction(item.key, item.fetched, store::ttl_remaining(item.deadline, sec), la, item.slab_class,
                         item.value_size);
}

}  // namespace ithaca::server
