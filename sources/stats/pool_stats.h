// The router role's answer to `stats items` and `stats slabs`: it has no
// items of its own (its requests go to the pools), so these two groups are
// asked of every server of its pools and merged (class_stats_merge.h), and
// memcached-tool's `display` shows the pools' classes. The server commands
// reach it through server_context::pool_stats; the router's connections set
// it (server/pool_inspect.h), the cache role's leave it null.
//
// Thread: the client coroutine that asked; collect() suspends it while the
// servers answer (each exchange bounded by its pool's timeouts).
#pragma once

#include <string_view>

#include "stats_provider.h"

namespace ithaca::stats {

class pool_stats_source {
 public:
  virtual ~pool_stats_source() = default;
  // `stats <group>` ("items" or "slabs") of every server, merged, into `out`.
  // False if no server answered (the caller answers from the local store).
  virtual bool collect(std::string_view group, stat_lines& out) = 0;
};

}  // namespace ithaca::stats
