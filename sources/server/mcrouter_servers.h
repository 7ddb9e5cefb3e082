// `stats servers` in mcrouter's form (its stats.cpp ServerStat), answered
// when the running config is mcrouter's (an mcrouter JSON file, or
// `ithaca --mcrouter`): one line per destination, keyed as mcrouter's
// ProxyDestinationKey
//   HOST:PORT:PROTOCOL:SECURITY:notcompressed-TIMEOUTMS
// (host as the config writes it; SECURITY plain or ssl; the timeout is part
// of the key: one server in two pools with two timeouts is two
// destinations), its value
//   avg_latency_us:A pending_reqs:P inflight_reqs:I[ hard_tko; | soft_tko; ]
//   [ STATE:N ...][; RESULT:N[ RESULT:N ...]]
// A: the mean over the workers that had a reply of each one's smoothed
// reply latency (proxy/smoothed_latency.h, mcrouter's window of 16), with 3
// decimals; P: calls queued and not sent, I: sent and unanswered, summed
// over the workers; a server marked down is hard_tko when a connect failed,
// else soft_tko; STATE: how many workers see it new, up, down or closed
// (each non-zero count, in that order); RESULT: the calls' results by
// mcrouter's names, non-zero ones in its enum's order. ithaca's own
// per-server lines (POOL/ADDRESS:FIELD) stay under `stats servers` for its
// YAML configs and under `stats ithaca_servers` for every config.
// [a worker answering stats, under server_stats's reset mutex]
#pragma once

#include "route_tree.h"
#include "stats_provider.h"

namespace ithaca::server {

void mcrouter_stats_servers(const route::route_tree& tree, stats::stat_lines& out);

}  // namespace ithaca::server
