#include <doctest/doctest.h>

#include "restart_only.h"

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
  CHECK(restart_only_changes(a, b) ==
        std::vector<std::string>{"listen.tcp", "server.workers", "cache.hash_power"});
}
