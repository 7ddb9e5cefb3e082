// The cron coroutine (on the pooler machine): sweeps the store's hash in
// bucket ranges every gc_interval (expiry, CLOCK ageing, eviction above the
// high watermark), yielding between ranges so the pooler keeps accepting;
// and grows the hash table (store::grow_step) after each sweep and every
// 100 ms between sweeps, whatever the gc_interval. The store's GC and growth
// are single-caller; this coroutine is that caller.
#pragma once

#include "live_settings.h"
#include "server_clock.h"
#include "server_stats.h"
#include "store.h"

namespace ithaca::server {

struct cron_settings {
  uint64_t buckets_per_step = 16384;  // one step holds one bucket lock at a time
  bool grow = true;                   // false: the table keeps its start size (cache.hash_expand, -o no_hashexpand)
};

// Runs until cancelled. A sweep starts one live gc_interval after the last
// one ended. `reloaded` (same machine: the pooler signals it after publishing
// a reload) ends the wait early so the due time is worked out again with the
// new period (an hour-long wait would otherwise hide a new 100ms period);
// reloads alone never postpone a sweep.
void cron_main(store::store& st, const server_clock& clock, gc_counters& counters, const live_cell& live,
               mm::cond& reloaded, cron_settings s);

}  // namespace ithaca::server
