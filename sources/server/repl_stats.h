// The replication lines of `stats` (yrmcds's counters and ours).
#pragma once

#include "stats_provider.h"
#include "repl_counters.h"

namespace ithaca::server {

void repl_stat_lines(const replication::repl_counters& c, stats::stat_lines& out);

}  // namespace ithaca::server
