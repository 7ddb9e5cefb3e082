// The cron coroutine (on the pooler machine): sweeps the store's hash in
// bucket ranges every gc_interval (expiry, CLOCK ageing, eviction above the
// high watermark), yielding between ranges so the pooler keeps accepting.
// The store's GC is single-caller; this coroutine is that caller.
#pragma once

#include "server_clock.h"
#include "server_stats.h"
#include "store.h"

namespace ithaca::server {

struct cron_settings {
  int64_t interval_ms = 1000;
  uint64_t buckets_per_step = 16384;  // one step holds one bucket lock at a time
};

// Runs until cancelled.
void cron_main(store::store& st, const server_clock& clock, gc_counters& counters, cron_settings s);

}  // namespace ithaca::server
