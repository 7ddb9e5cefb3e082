#include "cron.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace ithaca::server {

namespace {

// How often the table's load is looked at between sweeps (a sum of per-thread counters):
// a gc_interval of up to an hour must not leave a cache that fills meanwhile walking
// long chains.
constexpr mm::millis kGrowthCheckMs = 100;

// The table doubles while it holds more than 1.5 items per bucket, in steps of one bucket
// lock at a time, yielding between steps as the sweep does (the growth has the sweep's
// single caller: this coroutine). False if cancelled.
bool grow_table(store::store& st, uint64_t buckets_per_step) {
  const unsigned power = st.table_now().power;
  while (st.grow_step(buckets_per_step)) {
    mm::yield();
    if (mm::coroutine_cancelled()) return false;
  }
  if (const unsigned now = st.table_now().power; now != power)
    spdlog::info("hash table: grew from 2^{} to 2^{} buckets ({} items)", power, now, st.stats().curr_items);
  return true;
}

// After the memory limit was lowered (cache_memlimit, SIGHUP) and the sweep brought usage
// under it, the item region's pages that eviction emptied go back to the kernel
// (store::release_free_memory: MADV_DONTNEED over every free block and what lies above the
// region's top), so RSS follows the limit down. It walks every block under the region's
// lock, which workers allocating meanwhile wait for (milliseconds for a region of
// gigabytes), so only on a lowered limit, never per pass. `trimmed_at`: the limit the
// region was last trimmed to (or the start's). [the cron coroutine]
void trim_after_lowered_limit(store::store& st, uint64_t& trimmed_at) {
  const uint64_t limit = st.memory_limit();
  if (limit >= trimmed_at) {
    trimmed_at = limit;  // raised or unchanged: nothing was given up
    return;
  }
  if (st.mem_used() > limit) return;  // the next pass evicts the rest first
  const uint64_t advised = st.release_free_memory();
  trimmed_at = limit;
  spdlog::info("memory limit lowered to {} bytes: {} bytes of the item region given back", limit, advised);
}

}  // namespace

void cron_main(store::store& st, const server_clock& clock, gc_counters& counters, const live_cell& live,
               mm::cond& reloaded, cron_settings s) {
  live_reader settings(live);
  int64_t last_end = mm::deadline_after(0);  // a sweep is due one period after the last ended
  uint64_t trimmed_at = st.memory_limit();
  for (;;) {
    settings.refresh();
    const auto period_ns = static_cast<int64_t>(settings->gc_interval_ms) * 1000000;
    if (mm::millis left = mm::millis_until(last_end + period_ns); left > 0) {
      mm::wait_status w = reloaded.wait(std::min(left, kGrowthCheckMs));
      if (w == mm::wait_status::Cancelled) return;
      if (w == mm::wait_status::Ok) continue;  // a reload: the due time again, with its period
      if (s.grow && !grow_table(st, s.buckets_per_step)) return;
      continue;  // the sweep's due time again
    }
    int64_t start = mm::now_ns();
    store::gc_stats total;
    uint64_t next = 0;
    // An empty store (the router role's, usually) has nothing to expire,
    // age or evict: the sweep would only walk 2^hash_power empty buckets.
    const store::store_stats_snapshot held = st.stats();
    if (held.curr_items != 0 || held.bytes != 0) {
      do {
        next = st.gc_sweep(next, s.buckets_per_step, clock.now(), total);
        mm::yield();  // let the pooler's other coroutines run between ranges
        if (mm::coroutine_cancelled()) return;
      } while (next != 0);
    }
    if (s.grow && !grow_table(st, s.buckets_per_step)) return;
    trim_after_lowered_limit(st, trimmed_at);
    counters.runs.fetch_add(1, std::memory_order_relaxed);
    counters.last_ms.store(static_cast<uint64_t>((mm::now_ns() - start) / 1000000), std::memory_order_relaxed);
    if (total.evictions || total.reclaimed)
      spdlog::debug("gc: visited {} reclaimed {} evicted {}", total.visited, total.reclaimed, total.evictions);
    last_end = mm::deadline_after(0);
  }
}

}  // namespace ithaca::server
