// The router role's `stats` groups, from the live route tree's pools and
// servers (every worker's counter block summed; single-writer relaxed
// atomics, so a reading is a consistent-enough snapshot, as memcached's).
//   stats pools    per pool: servers, servers up, requests, replies, failures
//   stats servers  per server: state, transitions, requests, replies,
//                  failures by kind, in flight, connections, connects,
//                  latency p50/p99/p999 in microseconds
// `stats` itself gets the router's summary (router_pools, router_servers,
// router_servers_down, router_requests, router_failures).
// [any worker; takes no lock]
#pragma once

#include "route_tree.h"
#include "stats_provider.h"

namespace ithaca::server {

void router_stats_pools(const route::route_tree& tree, route::stat_lines& out);
void router_stats_servers(const route::route_tree& tree, route::stat_lines& out);
void router_stats_summary(const route::route_tree& tree, route::stat_lines& out);

}  // namespace ithaca::server
