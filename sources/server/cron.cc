#include "cron.h"

#include <spdlog/spdlog.h>

namespace ithaca::server {

void cron_main(store::store& st, const server_clock& clock, gc_counters& counters, cron_settings s) {
  for (;;) {
    if (mm::sleep(s.interval_ms) == mm::wait_status::Cancelled) return;
    int64_t start = mm::now_ns();
    store::gc_stats total;
    uint64_t next = 0;
    do {
      next = st.gc_sweep(next, s.buckets_per_step, clock.now(), total);
      mm::yield();  // let the pooler's other coroutines run between ranges
      if (mm::coroutine_cancelled()) return;
    } while (next != 0);
    counters.runs.fetch_add(1, std::memory_order_relaxed);
    counters.last_ms.store(static_cast<uint64_t>((mm::now_ns() - start) / 1000000), std::memory_order_relaxed);
    if (total.evictions || total.reclaimed)
      spdlog::debug("gc: visited {} reclaimed {} evicted {}", total.visited, total.reclaimed, total.evictions);
  }
}

}  // namespace ithaca::server
