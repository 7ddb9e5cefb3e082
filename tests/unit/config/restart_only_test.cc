#include <doctest/doctest.h>

#include "restart_only.h"
#include "route_kind_info.h"

using namespace ithaca::config;

TEST_CASE("restart_only_changes names the settings a running server keeps") {
  config a;
  config b = a;
  CHECK(restart_only_changes(a, b).empty());
  // Live settings are not restart-only.
  b.cache.memory_limit = 8 * kMiB;
  b.server.max_connections = 3;
  b.logging.level = log_level::Debug;
  CHECK(restart_only_changes(a, b).empty());
  b.server.workers = a.server.workers + 1;
  b.cache.hash_power = a.cache.hash_power + 1;
  b.listen.tcp.push_back(tcp_address{"127.0.0.1", 1});
  CHECK(restart_only_changes(a, b) == std::vector<std::string>{"listen.tcp", "server.workers", "cache.hash_power"});
  // The size class table is built once.
  b = a;
  b.cache.slab_growth_factor = 1.5;
  b.cache.slab_min_size = 100;
  CHECK(restart_only_changes(a, b) == std::vector<std::string>{"cache.slab_growth_factor", "cache.slab_min_size"});
  // The reliable deletes' spool machine is set up once.
  b = a;
  b.router.spool_dir = "/elsewhere";
  b.router.spool_fsync = true;
  CHECK(restart_only_changes(a, b) == std::vector<std::string>{"router.spool_dir", "router.spool_fsync"});
  // The store's eviction policy is chosen when it is made.
  b = a;
  b.cache.eviction = cache_eviction::Clock;
  CHECK(restart_only_changes(a, b) == std::vector<std::string>{"cache.eviction"});
}

TEST_CASE("listener_changes: a listener added, removed or moved refuses the reload") {
  config a;
  a.router.listeners.push_back(listener_route{"127.0.0.1:1", {}, 1});
  a.router.listeners.push_back(listener_route{"unix:/tmp/s", {}, 2});
  config b = a;
  CHECK(listener_changes(a, b) == "");
  b.router.listeners[0].route =
      module_node("pool", route_format::Yaml, 1, {{"pool", "p"}});  // a new tree on the same listener: live
  CHECK(listener_changes(a, b) == "");
  b.router.listeners.push_back(listener_route{"127.0.0.1:3", {}, 3});
  CHECK(listener_changes(a, b) == "listener 127.0.0.1:3 added");
  b.router.listeners.push_back(listener_route{"127.0.0.1:3", {}, 4});
  CHECK(listener_changes(a, b) == "listener 127.0.0.1:3 added");  // said once
  b = a;
  b.router.listeners.erase(b.router.listeners.begin());
  CHECK(listener_changes(a, b) == "listener 127.0.0.1:1 removed");
  b = a;
  std::swap(b.router.listeners[0], b.router.listeners[1]);
  CHECK(listener_changes(a, b) == "the listeners are in another order");
}

TEST_CASE("a listener's backlog and client limit are restart-only") {
  config a;
  a.router.listeners.push_back(listener_route{"127.0.0.1:1", {}, 1});
  config b = a;
  b.router.listeners[0].backlog = 5;
  b.router.listeners[0].max_clients = 7;
  CHECK(restart_only_changes(a, b) == std::vector<std::string>{"listeners.backlog", "listeners.client_connections"});
}
