// live_settings.h: what a reload can change while the server runs, read from
// a config, laid back over one (`stats settings`), and listed as changes.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "live_settings.h"

namespace ithaca::server {

TEST_CASE("live_settings_of takes every live value of the config, and overlay lays them back") {
  config::config c;
  c.cache.memory_limit = 123ull << 20;
  c.cache.item_size_max = 2 << 20;
  c.cache.large_value_threshold = 1 << 16;
  c.cache.large_value_disk_limit = 2ull << 30;
  c.cache.lease_interval_ms = 11;
  c.cache.gc_interval_ms = 2500;
  c.server.max_connections = 77;
  c.server.idle_timeout_ms = 9000;
  c.server.enable_shutdown = true;
  c.server.enable_watch = false;
  c.server.enable_dumping = false;
  c.server.enable_flush_all = false;
  c.server.reqs_per_event = 5;
  c.cache.evictions = false;
  c.logging.level = config::log_level::Debug;
  c.replication.ack = config::replication_ack::Slave;
  c.replication.ack_timeout_ms = 321;
  c.router.has_route = true;
  const live_settings l = live_settings_of(c);
  CHECK(l.memory_limit == 123u << 20);
  CHECK(l.max_connections == 77);
  CHECK(l.idle_timeout_ms == 9000);
  CHECK(l.enable_shutdown);
  CHECK_FALSE(l.enable_watch);
  CHECK_FALSE(l.evictions);
  CHECK(l.log_level == config::log_level::Debug);
  CHECK(l.ack == config::replication_ack::Slave);
  CHECK_FALSE(l.store_routes);  // the file has a route:
  CHECK(live_changes(live_settings_of(config::config{}), l).size() == 17);

  config::config back;  // defaults, then the live values over them
  overlay(l, back);
  // Read again, the overlaid config gives the same live values: nothing lost.
  live_settings again = live_settings_of(back);
  again.store_routes = l.store_routes;  // not a setting of the overlay (the route tree's shape)
  CHECK(live_changes(l, again).empty());
  CHECK(back.server.reqs_per_event == 5);
  CHECK(back.cache.gc_interval_ms == 2500);
}

TEST_CASE("live_changes names each changed setting, old -> new in its unit, in struct order") {
  live_settings before;
  before.memory_limit = 64ull << 20;
  before.gc_interval_ms = 1000;
  before.max_connections = 1024;
  live_settings after = before;
  CHECK(live_changes(before, after).empty());
  after.memory_limit = 8ull << 20;
  after.gc_interval_ms = 100;
  after.max_connections = 10;
  after.enable_flush_all = false;
  after.evictions = false;
  after.log_level = config::log_level::Info;
  after.ack = config::replication_ack::Slave;
  after.config_file = "/elsewhere.yaml";  // not a setting: not listed
  after.close_clients = true;             // follows the role: not listed
  const std::vector<std::string> expected = {
      "cache.memory_limit 64 MiB -> 8 MiB", "cache.gc_interval 1s -> 100ms",
      "server.max_connections 1024 -> 10",  "server.enable_flush_all true -> false",
      "cache.evictions true -> false",      "replication.ack none -> slave",
      "logging.level warn -> info",
  };
  CHECK(live_changes(before, after) == expected);
  // The other way round: the same settings, old and new swapped.
  const auto back = live_changes(after, before);
  REQUIRE(back.size() == expected.size());
  CHECK(back[0] == "cache.memory_limit 8 MiB -> 64 MiB");
  CHECK(back[6] == "logging.level info -> warn");
}

TEST_CASE("each boolean setting is listed on its own") {
  const live_settings base;
  auto flipped = [&](bool live_settings::*member) {
    live_settings after = base;
    after.*member = !(base.*member);
    return live_changes(base, after);
  };
  CHECK(flipped(&live_settings::enable_shutdown) == std::vector<std::string>{"server.enable_shutdown false -> true"});
  CHECK(flipped(&live_settings::enable_watch) == std::vector<std::string>{"server.enable_watch true -> false"});
  CHECK(flipped(&live_settings::enable_dumping) == std::vector<std::string>{"server.enable_dumping true -> false"});
  CHECK(flipped(&live_settings::store_routes).empty());
}

}  // namespace ithaca::server
