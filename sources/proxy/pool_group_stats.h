// mcrouter's per-pool-group counters (--pool-stats-config-file, its
// PoolStats): the file names pools ("stats_enabled_pools"); each backend pool
// counts into the group whose name is the longest prefix of the pool's name
// (so "twmemcache.CI.west" also counts the pool "twmemcache.CI.west.1"), and
// a pool no name prefixes counts nowhere. Per group, in `stats` and the
// --stats-root stats file:
//   GROUP.requests.sum            backend calls to the group's servers, each
//                                 key of a retrieval one (mcrouter splits a
//                                 multi-get into one request per key), a call
//                                 failed at once (server down) included
//   GROUP.duration_us.avg         those calls' time from submit to answer or
//                                 failure, smoothed over 64 samples
//   GROUP.final_result_error.sum  client requests whose FIRST group is this
//                                 one (the first pool they reached with its
//                                 server up) and whose reply to the client was
//                                 an error: a failover's last answer decides,
//                                 so a request that failed here and succeeded
//                                 in the next pool is no error
//   GROUP.total_duration_us.avg   those client requests' time from parse to
//                                 reply, smoothed over 64 samples; a group
//                                 that is never a request's first (a
//                                 failover's second child) stays 0
//   GROUP.connections             open connections to the group's servers
// A `.avg` over the workers is the mean of the workers that have a sample
// (mcrouter adds its proxies' values, which counts a 2-proxy average twice).
//
// Threads: installed once on the main thread before any server is made or
// any worker runs; then each worker writes its own counter block (single
// writer, relaxed: stats::counter, smoothed_mean) and `stats` on any worker
// sums the blocks at read time. No lock anywhere.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "counters.h"
#include "smoothed_latency.h"
#include "stats_provider.h"

namespace ithaca::flow {
class request_slot;
}

namespace ithaca::proxy {

// One worker's counters for one group. [single writer: that worker]
struct pool_group_counters {
  stats::counter requests;
  stats::counter final_errors;
  std::atomic<std::int64_t> connections{0};  // gauge: opened minus closed
  smoothed_mean<64> duration_us;
  smoothed_mean<64> total_duration_us;
};

// [main thread, before any backend_server is made and any worker runs]
void pool_groups_install(std::vector<std::string> names, unsigned workers);
// Whether any group is configured (else nothing here costs a clock read).
bool pool_groups_on();
// The group of pool `pool` (longest name that prefixes it), or -1.
int pool_group_of(std::string_view pool);
// Worker `worker`'s counters of `group`; null for -1. [that worker]
pool_group_counters* pool_group_at(unsigned worker, int group);

// A backend call of `slot` for `keys` (empty: all of its keys) to a server
// of `group`, started at `started_ns`, is done (answered or failed). [the
// slot's worker, `worker`]
void pool_group_call_done(unsigned worker, int group, const flow::request_slot& slot,
                          std::span<const std::uint32_t> keys, std::int64_t started_ns);
// A call of `slot` reached a server of `group` that is up: the client
// request it belongs to takes the group as its first one unless it has one
// (a detached request, async or shadow, answers no client: not counted).
// [the slot's worker]
void pool_group_reached(flow::request_slot& slot, int group);
// The client request `slot` is answered (its reply leaves now): its first
// group, if any, counts its final result and its total time. [the slot's
// worker, `worker`]
void pool_group_answered(const flow::request_slot& slot, unsigned worker);

// Every group's lines, in the file's order, summed over the workers. [any
// thread]
void pool_group_stat_lines(stats::stat_lines& out);

}  // namespace ithaca::proxy
