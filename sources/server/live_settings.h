// The settings that change while the server runs, as one immutable value
// published through a snapshot_cell (snapshot.h).
//
// Writer: the pooler, at start-up and on each SIGHUP that loads a valid file.
// Readers: every client coroutine and UDP loop (item_size_max for its parser,
// idle_timeout_ms for its next wait, enable_shutdown), the pooler's accept
// path (max_connections) and cron (gc_interval_ms), and `stats` (all of it).
// The store keeps its own live copies of memory_limit, item_size_max,
// large_value_threshold, large_value_disk_limit and lease_interval_ms (atomics the reload sets),
// because the store knows nothing of the server; `cache_memlimit` sets the
// store's memory limit only, so the store is the truth for that one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config.h"
#include "route_tree.h"
#include "service_info.h"
#include "snapshot.h"

namespace ithaca::server {

struct live_settings {
  uint64_t memory_limit = 0;            // cache.memory_limit (bytes)
  uint64_t item_size_max = 0;           // cache.item_size_max
  uint64_t max_value_size = 0;          // router.max_value_size (a tree that never reaches the store)
  uint64_t large_value_threshold = 0;   // cache.large_value_threshold
  uint64_t large_value_disk_limit = 0;  // cache.large_value_disk_limit
  uint64_t lease_interval_ms = 0;       // cache.lease_interval
  uint64_t gc_interval_ms = 0;          // cache.gc_interval
  uint64_t max_connections = 0;         // server.max_connections
  uint64_t idle_timeout_ms = 0;         // server.idle_timeout; 0 = never
  bool enable_shutdown = false;         // server.enable_shutdown
  bool enable_watch = true;             // server.enable_watch (memcached -W: false)
  bool enable_dumping = true;           // server.enable_dumping (memcached -X: false)
  bool enable_flush_all = true;         // server.enable_flush_all (memcached -F: false)
  uint64_t reqs_per_event = 20;         // server.reqs_per_event (memcached -R)
  bool evictions = true;                // cache.evictions (memcached -M: false; the store's copy rules)
  config::log_level log_level = config::log_level::Warn;  // logging.level
  // replication.ack / ack_timeout: they shape the route tree below (the ack
  // gate), rebuilt at each reload; here for the change list.
  config::replication_ack ack = config::replication_ack::None;
  uint64_t ack_timeout_ms = 0;
  // The route tree (pools: and route:), or the local store alone. A client
  // batch keeps the tree it started with until its last reply.
  std::shared_ptr<const route::route_tree> routes;
  // The file has no `route:`: the tree is the local store as the replication
  // role allows (route::store_tree), rebuilt when the role changes.
  bool store_routes = true;
  // A replication slave that does not serve reads: the pooler closes every
  // new connection at accept (yrmcds does). Follows the role (served_role.h).
  bool close_clients = false;
  // --config's path ("" without one) and when that file was last loaded
  // (unix seconds: start-up, then each SIGHUP that applied it), for
  // `__mcrouter__.config_file` and `config_age`.
  std::string config_file;
  int64_t config_loaded_at = 0;
  // The rest of what `__mcrouter__.*` tells of that file (service_info_of.h).
  std::shared_ptr<const commands::service_info> info;
};

using live_cell = snapshot_cell<live_settings>;
using live_reader = snapshot_reader<live_settings>;

live_settings live_settings_of(const config::config& c);

// Writes the live values into `c`: the running configuration is the start-up
// one with the live settings over it (for `stats settings`).
void overlay(const live_settings& live, config::config& c);

// "cache.memory_limit 64 MiB -> 8 MiB" for each setting that differs, in
// struct order. [any thread; pure]
std::vector<std::string> live_changes(const live_settings& before, const live_settings& after);

}  // namespace ithaca::server
