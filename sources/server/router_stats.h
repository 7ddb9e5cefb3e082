// The router role's `stats` groups, from the live route tree's pools and
// servers (every worker's counter block summed; single-writer relaxed
// atomics, so a reading is a consistent-enough snapshot, as memcached's).
//   stats pools    per pool: servers, servers up, requests, replies, failures
//   stats servers  per server: state, transitions, requests, replies,
//                  failures by kind, in flight, connections, connects,
//                  joined gets, latency p50/p99/p999 in microseconds (with
//                  an mcrouter config `stats ithaca_servers`; its `stats
//                  servers` is mcrouter's, mcrouter_servers.h)
//   stats routes   per route node of the tree, in build order: its kind and
//                  name, requests, and the counters of its kind (failovers,
//                  failover_limited, gutter_writes, shadow_sent, async_sent,
//                  async_dropped, warm_fills, rate_limited, l1_hits), and the
//                  workers' detached requests (async_sent/dropped/in flight);
//                  with listeners of their own (route_tree.h), each node's
//                  `listener`: the first root index that reaches it. The
//                  Prometheus page's ithaca_route_* are made of these lines.
//   stats latency  per server: the latency histogram, cumulative counts below
//                  each bound of latency_histogram::kExportBoundsUs
//                  (latency_le_US), latency_sum_us and latency_count (what
//                  the Prometheus page's histograms are made of)
// `stats` itself gets the router's summary (router_pools, router_servers,
// router_servers_down, router_requests, router_failures) and mcrouter's
// counters (num_servers*, cmd_TYPE_count, result_*_count).
// `stats reset` zeroes every counter (not the gauges: state, in flight,
// connections) by taking a baseline per server; a server kept by a reload
// keeps its baseline.
// [a worker answering stats, under server_stats's reset mutex]
#pragma once

#include <cstdint>
#include <unordered_set>

#include "backend_server.h"
#include "route_tree.h"
#include "stats_provider.h"

namespace ithaca::server {

void router_stats_pools(const route::route_tree& tree, stats::stat_lines& out);
void router_stats_servers(const route::route_tree& tree, stats::stat_lines& out);
void router_stats_latency(const route::route_tree& tree, stats::stat_lines& out);
void router_stats_routes(const route::route_tree& tree, stats::stat_lines& out);
void router_stats_summary(const route::route_tree& tree, stats::stat_lines& out);
void router_stats_reset(const route::route_tree& tree);

// What mcrouter's counters (router_stats_table.h: ITHACA_MCROUTER_STATS) read
// of the tree's servers: the workers' connection states, the suspect
// servers and the failures and error replies by mcrouter's result.
struct mcrouter_figures {
  uint64_t servers = 0, fresh = 0, up = 0, down = 0, closed = 0;
  uint64_t suspect = 0;
  uint64_t dev_null = 0;  // requests the tree's dev_null routes dropped (their dev_null_requests)
  uint64_t error = 0, connect_error = 0, data_timeout = 0, tko = 0, client_error = 0, local_error = 0, remote_error = 0;
};
mcrouter_figures router_mcrouter_figures(const route::route_tree& tree);

// Each server of the tree once (a server in two pools is one destination).
template <class F>
void for_each_tree_server(const route::route_tree& tree, F&& f) {
  std::unordered_set<const proxy::backend_server*> seen;
  for (const auto& p : tree.pools()) {
    for (const auto& s : p->servers()) {
      if (seen.insert(s.get()).second) f(*s);
    }
  }
}

// mcrouter's state of a destination (ProxyDestinationBase::State), which it
// keeps per proxy thread: here per worker, from that worker's counters.
enum class mcrouter_state : std::uint8_t {
  New,     // never connected
  Up,      // a connection is open
  Down,    // the server is marked down
  Closed,  // connected once, none open now
};
inline constexpr std::size_t kMcrouterStates = 4;
inline constexpr const char* kMcrouterStateNames[kMcrouterStates] = {"new", "up", "down", "closed"};
mcrouter_state mcrouter_state_of(const proxy::backend_server& s, const proxy::server_counters& c);

// `stats suspect_servers` (mcrouter's): "HOST:PORT" -> "status:tko
// num_failures:N" for a server marked down, "status:down num_failures:N"
// for one with failures since its last reply that is still up.
void router_stats_suspect(const route::route_tree& tree, stats::stat_lines& out);

}  // namespace ithaca::server
