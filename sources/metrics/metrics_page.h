// The /metrics page: the server's `stats` groups (name/value lines, as the
// memcached protocol prints them) turned into Prometheus families.
//   memcached_*  memcached_exporter's names, types and labels, from `stats`,
//                `stats settings`, `stats items` and `stats slabs`, so its
//                dashboards work unchanged;
//   ithaca_*     the router role per pool and server (`stats pools`,
//                `stats servers`, `stats latency`), every node of the
//                route tree (`stats routes`), replication (the repl_*
//                lines of `stats`), ithaca's own store figures, and the
//                runtime of each worker machine.
// Pure: the caller gathers the groups (metrics_listener.cc, on the metrics
// machine) and this only formats them. [any thread]
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ithaca::metrics {

using stat_lines = std::vector<std::pair<std::string, std::string>>;

// One worker machine's runtime counters (machinarium's machine_counters).
struct worker_runtime {
  uint64_t coroutines = 0;          // alive now
  uint64_t coroutines_created = 0;  // since start
  uint64_t ready = 0;               // ready queue length after the last turn
  uint64_t context_switches = 0;
  uint64_t loop_iterations = 0;
  uint64_t messages = 0;  // cross-machine wake-ups and spawns delivered
  uint64_t timers = 0;    // pending timers
  uint64_t stacks_cached = 0;
  bool uring = false;              // the io_uring backend (the two below are its)
  uint64_t uring_submissions = 0;  // SQEs submitted
  uint64_t uring_completions = 0;  // CQEs reaped
};

struct page_input {
  stat_lines general;     // stats
  stat_lines settings;    // stats settings
  stat_lines items;       // stats items
  stat_lines slabs;       // stats slabs
  stat_lines pools;       // stats pools
  stat_lines servers;     // stats servers
  stat_lines latency;     // stats latency: POOL/ADDR:latency_le_US (cumulative), _sum_us, _count
  stat_lines routes;      // stats routes: route:N (KIND NAME), route:N:listener, route:N:COUNTER, async_*
  stat_lines route_help;  // COUNTER -> the HELP of a counter a route kind keeps (its module's, route_kind.h)
  std::vector<worker_runtime> workers;
};

std::string render_page(const page_input& in);

}  // namespace ithaca::metrics
