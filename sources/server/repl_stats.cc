#include "repl_stats.h"

#include <string>

#include "counters.h"
#include "repl_stats_table.h"

namespace ithaca::server {

namespace {

using stats::load;

// The mean ack wait of the writes confirmed (0 before the first).
uint64_t ack_latency_avg_us(const replication::repl_counters& c) {
  const uint64_t confirmed = load(c.ack_confirmed);
  return confirmed ? load(c.ack_latency_us) / confirmed : 0;
}

}  // namespace

// The rows of stats/repl_stats_table.h, in order.
void repl_stat_lines(const replication::repl_counters& c, stats::stat_lines& out) {
#define ITHACA_X(name, type, prom, help, page, labels, when, read) \
  if (when) stats::add_stat(out, name, read);
  ITHACA_REPL_STATS(ITHACA_X)
#undef ITHACA_X
}

}  // namespace ithaca::server
