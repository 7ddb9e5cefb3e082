// mcrouter's --stats-root (McrouterLogger): every --stats-logging-interval
// milliseconds (default 10,000; 0: never) three files are written, whole
// (config/atomic_file.h), under ROOT with mcrouter's names,
// PREFIX = libmcrouter.mcrouter.ROUTER (ROUTER: the first -p port, "0"
// without one):
//   PREFIX.stats                {"PREFIX.NAME": value} of every `stats` line
//                               (numbers as numbers), pretty, keys sorted
//   PREFIX.startup_options      mcrouter's option names with ithaca's values
//                               at start, and "pid"
//   PREFIX.config_sources_info  {"config_file": PATH, "mcrouter_config": MD5}
//                               of the config running (__mcrouter__'s answer)
// Each round rewrites all three, so their mtime says the router is alive (as
// mcrouter rewrites and touches them). [a coroutine on the pooler machine;
// the stats are read there, the files written on the blocking pool]
#pragma once

#include <cstdint>
#include <string>

#include "cli.h"
#include "live_settings.h"
#include "stats_provider.h"

namespace ithaca::server {

struct stats_files_settings {
  std::string root;             // "": off
  uint64_t interval_ms = 0;     // 0: off
  std::string prefix;           // libmcrouter.mcrouter.ROUTER
  std::string startup_options;  // the JSON, written as it is
};

// From mcrouter's flags (--stats-root, --stats-logging-interval, -p, -R,
// --num-proxies, ...): off unless both are set. [main thread]
stats_files_settings stats_files_settings_of(const config::cli_options& cli, unsigned workers);

// Writes the files every interval until cancelled. [pooler coroutine]
void stats_files_main(const stats_files_settings& settings, stats::stats_provider& stats, const live_cell& live);

}  // namespace ithaca::server
