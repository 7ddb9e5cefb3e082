// A twemproxy nutcracker.yml read as it is (config/nutcracker_reader.h): every
// pool a pool plus a listener with its pool route, twemproxy's defaults, and
// every refusal as file:line: message.
#include <doctest/doctest.h>

#include "load.h"
#include "route_probe.h"

using namespace ithaca::config;
namespace kinds = ithaca::kinds;

namespace {

std::string nutcracker_load(const std::string& yaml, config* out = nullptr) {
  config c;
  std::string error;
  bool ok = load_config_text(yaml, "nutcracker.yml", c, &error);
  CHECK(ok == error.empty());
  if (out) *out = c;
  return error;
}

}  // namespace

TEST_CASE("nutcracker.yml: two pools become two pools, each with a listener of its own") {
  config c;
  REQUIRE(nutcracker_load("alpha:\n"
                          "  listen: 127.0.0.1:22121\n"
                          "  hash: fnv1a_64\n"
                          "  hash_tag: \"{}\"\n"
                          "  distribution: ketama\n"
                          "  timeout: 400\n"
                          "  backlog: 1024\n"
                          "  client_connections: 100\n"
                          "  preconnect: true\n"
                          "  server_connections: 2\n"
                          "  auto_eject_hosts: true\n"
                          "  server_retry_timeout: 2000\n"
                          "  server_failure_limit: 3\n"
                          "  redis: false\n"
                          "  tcpkeepalive: false\n"
                          "  servers:\n"
                          "   - 127.0.0.1:11212:1\n"
                          "   - 127.0.0.1:11213:3 cache-b\n"
                          "beta:\n"
                          "  listen: /tmp/beta.sock 0666\n"
                          "  hash: hsieh\n"
                          "  distribution: modula\n"
                          "  servers:\n"
                          "   - /run/mc.sock:2 mc\n",
                          &c) == "");
  CHECK(c.router.format == "nutcracker");
  CHECK(c.listen.tcp.empty());
  CHECK(c.listen.unix_paths.empty());
  CHECK(c.listen.unix_mode == 0666);
  CHECK_FALSE(c.router.has_route);
  REQUIRE(c.router.pools.size() == 2);
  REQUIRE(c.router.listeners.size() == 2);

  const pool_config& a = c.router.pools[0];
  CHECK(a.name == "alpha");
  CHECK(a.line == 1);
  CHECK(a.hash == kinds::hash_kind::Fnv1a_64);
  CHECK(a.hash_tag == "{}");
  CHECK(a.dist == kinds::distribution_kind::Ketama);
  CHECK(a.timeout_ms == 400);
  CHECK(a.connect_timeout_ms == 400);
  CHECK(a.preconnect);
  CHECK(a.connections == 2);
  CHECK(a.auto_eject_hosts);
  CHECK(a.retry_interval_ms == 2000);
  CHECK(a.retry_interval_max_ms == 2000);  // no back-off: twemproxy retries after exactly this
  CHECK(a.failure_limit == 3);
  REQUIRE(a.servers.size() == 2);
  CHECK(a.servers[0].address == "127.0.0.1:11212");
  CHECK(a.servers[0].weight == 1);
  CHECK(a.servers[0].name == "");
  CHECK(a.servers[1].address == "127.0.0.1:11213");
  CHECK(a.servers[1].weight == 3);
  CHECK(a.servers[1].name == "cache-b");
  CHECK(a.servers[1].line == 18);

  const listener_route& la = c.router.listeners[0];
  CHECK(la.address == "127.0.0.1:22121");
  CHECK(la.backlog == 1024);
  CHECK(la.max_clients == 100);
  CHECK(is(la.route, "pool"));
  CHECK(pool_of(la.route) == "alpha");

  const pool_config& b = c.router.pools[1];
  CHECK(b.hash == kinds::hash_kind::Hsieh);
  CHECK(b.dist == kinds::distribution_kind::Modula);
  REQUIRE(b.servers.size() == 1);
  CHECK(b.servers[0].address == "unix:/run/mc.sock");
  CHECK(b.servers[0].weight == 2);
  CHECK(b.servers[0].name == "mc");
  CHECK(c.router.listeners[1].address == "unix:/tmp/beta.sock");
  CHECK(pool_of(c.router.listeners[1].route) == "beta");
}

TEST_CASE("nutcracker.yml: twemproxy's defaults where a key is omitted") {
  config c;
  REQUIRE(nutcracker_load("p:\n  listen: 127.0.0.1:0\n  servers: [\"127.0.0.1:11211:1\"]\n", &c) == "");
  const pool_config& p = c.router.pools[0];
  CHECK(p.hash == kinds::hash_kind::Fnv1a_64);  // not ithaca's md5: placement stays nutcracker's
  CHECK(p.dist == kinds::distribution_kind::Ketama);
  CHECK(p.hash_tag.empty());
  CHECK(p.connections == 1);
  CHECK_FALSE(p.auto_eject_hosts);
  CHECK_FALSE(p.preconnect);
  CHECK(p.failure_limit == 2);
  CHECK(p.retry_interval_ms == 30000);
  CHECK(p.retry_interval_max_ms == 30000);
  CHECK(p.timeout_ms == 1000);  // twemproxy waits forever; no wait here does
  CHECK(c.router.listeners[0].backlog == 512);
  CHECK(c.router.listeners[0].max_clients == 0);
  CHECK(c.router.listeners[0].address == "127.0.0.1:0");
}

TEST_CASE("nutcracker.yml: ithaca's own YAML is not taken for one") {
  config c;
  // A section name of ithaca's: ithaca's YAML, refused as such.
  CHECK(
      nutcracker_load("listen:\n  tcp: 127.0.0.1:0\nalpha:\n  listen: 127.0.0.1:1\n  servers: [\"127.0.0.1:2:1\"]\n") ==
      "nutcracker.yml:3: unknown section 'alpha'");
  // No pool with listen and servers: ithaca's YAML too.
  CHECK(nutcracker_load("alpha:\n  servers: [\"127.0.0.1:2:1\"]\n")
            .starts_with("nutcracker.yml:1: unknown section 'alpha'"));
  REQUIRE(nutcracker_load("cache:\n  memory_limit: 64m\n", &c) == "");
  CHECK(c.router.format == "yaml");
}

TEST_CASE("nutcracker.yml: refusals point at their line") {
  const std::string ok_pool = "a:\n  listen: 127.0.0.1:22121\n  servers: [\"127.0.0.1:11211:1\"]\n";
  CHECK(
      nutcracker_load(ok_pool + "b:\n  listen: 127.0.0.1:22122\n  redis: true\n  servers: [\"127.0.0.1:6379:1\"]\n") ==
      "nutcracker.yml:6: redis: redis pools are not supported (ithaca speaks the memcached protocols only)");
  CHECK(
      nutcracker_load(ok_pool + "b:\n  listen: 127.0.0.1:22122\n  redis_db: 2\n  servers: [\"127.0.0.1:6379:1\"]\n") ==
      "nutcracker.yml:6: redis_db: redis pools are not supported (ithaca speaks the memcached protocols only)");
  CHECK(nutcracker_load(ok_pool + "b:\n  listen: 127.0.0.1:22122\n  servers: [\"127.0.0.1:1:1\"]\n  timeot: 400\n") ==
        "nutcracker.yml:7: unknown key 'timeot' in section 'b' (did you mean 'timeout'?)");
  CHECK(nutcracker_load(ok_pool +
                        "b:\n  listen: 127.0.0.1:22122\n  servers: [\"127.0.0.1:1:1\"]\n  tcpkeepalive: true\n") ==
        "nutcracker.yml:7: tcpkeepalive: true is not supported (ithaca finds a dead server by its failures and "
        "probes)");
  CHECK(nutcracker_load(ok_pool + "b:\n  servers: [\"127.0.0.1:1:1\"]\n") ==
        "nutcracker.yml:5: pool 'b' needs `listen:` (host:port or /path)");
  CHECK(nutcracker_load(ok_pool + "b:\n  listen: 127.0.0.1:22122\n  hash: md6\n  servers: [\"127.0.0.1:1:1\"]\n")
            .starts_with("nutcracker.yml:6: hash: expected one of one_at_a_time, md5,"));
  CHECK(nutcracker_load(ok_pool +
                        "b:\n  listen: 127.0.0.1:22122\n  distribution: jump\n  servers: [\"127.0.0.1:1:1\"]\n") ==
        "nutcracker.yml:6: distribution: expected one of ketama, modula or random, got 'jump'");
  CHECK(nutcracker_load(ok_pool + "b:\n  listen: 127.0.0.1:22121\n  servers: [\"127.0.0.1:1:1\"]\n") ==
        "nutcracker.yml:5: listen: pool 'b' listens on 127.0.0.1:22121, as the pool on line 1 does");
  CHECK(nutcracker_load(ok_pool + "b:\n  listen: 127.0.0.1:22122\n  servers: [\"127.0.0.1:1:0\"]\n") ==
        "nutcracker.yml:6: servers: bad server '127.0.0.1:1:0': weight must be an integer from 1 to 1000000");
  CHECK(nutcracker_load(ok_pool + "b:\n  listen: 127.0.0.1:22122\n  servers: []\n") ==
        "nutcracker.yml:5: pool 'b' has no servers");
  CHECK(
      nutcracker_load(ok_pool + "b:\n  listen: 127.0.0.1:22122\n  hash_tag: \"{\"\n  servers: [\"127.0.0.1:1:1\"]\n") ==
      "nutcracker.yml:6: hash_tag: must be two characters, like \"{}\", got \"{\"");
  CHECK(nutcracker_load(ok_pool + "b:\n  listen: /tmp/x.sock 999\n  servers: [\"127.0.0.1:1:1\"]\n") ==
        "nutcracker.yml:5: listen: expected '/path' or '/path MODE' (MODE in octal, like 0666), got '/tmp/x.sock "
        "999'");
  CHECK(nutcracker_load(ok_pool + "b:\n  listen: 127.0.0.1:22122\n  timeout: 2s\n  servers: [\"127.0.0.1:1:1\"]\n")
            .starts_with("nutcracker.yml:6: timeout: expected"));
  CHECK(nutcracker_load(ok_pool + "a:\n  listen: 127.0.0.1:22122\n  servers: [\"127.0.0.1:1:1\"]\n") ==
        "nutcracker.yml:4: pool 'a' is defined twice (first on line 1)");
  CHECK(nutcracker_load(ok_pool + "b: 3\n") ==
        "nutcracker.yml:4: pool 'b' is a mapping with `listen:` and `servers:`, got '3'");
}

TEST_CASE("listeners: each a listen address and a route of its own") {
  config c;
  REQUIRE(nutcracker_load("listen:\n  tcp: 127.0.0.1:0\n"
                          "pools:\n  p:\n    servers: [127.0.0.1:1]\n"
                          "listeners:\n"
                          "  - listen: 127.0.0.1:22122\n"
                          "    route: {type: pool, pool: p}\n"
                          "    backlog: 64\n"
                          "    max_connections: 10\n"
                          "  - listen: unix:/tmp/l.sock\n"
                          "    route: {type: local}\n",
                          &c) == "");
  CHECK_FALSE(c.router.has_route);
  REQUIRE(c.router.listeners.size() == 2);
  CHECK(c.router.listeners[0].address == "127.0.0.1:22122");
  CHECK(is(c.router.listeners[0].route, "pool"));
  CHECK(pool_of(c.router.listeners[0].route) == "p");
  CHECK(c.router.listeners[0].backlog == 64);
  CHECK(c.router.listeners[0].max_clients == 10);
  CHECK(c.router.listeners[0].line == 7);
  CHECK(c.router.listeners[1].address == "unix:/tmp/l.sock");
  CHECK(is(c.router.listeners[1].route, "local"));
}

TEST_CASE("listeners: a listener's route may use a named route, as `route:` may") {
  config c;
  REQUIRE(nutcracker_load("listen:\n  tcp: 127.0.0.1:0\n"
                          "pools:\n  p:\n    servers: [127.0.0.1:1]\n"
                          "routes:\n  shared: {type: pool, pool: p}\n"
                          "route: shared\n"
                          "listeners:\n"
                          "  - listen: 127.0.0.1:22122\n"
                          "    route: {type: failover, children: [shared, pool:p]}\n",
                          &c) == "");
  REQUIRE(c.router.listeners.size() == 1);
  REQUIRE(c.router.listeners[0].route.children.size() == 2);
  CHECK(is(c.router.listeners[0].route.children[0], "ref"));
  CHECK(c.router.listeners[0].route.children[0].name == "shared");
  CHECK(nutcracker_load("listen:\n  tcp: 127.0.0.1:0\n"
                        "listeners:\n  - listen: 127.0.0.1:5\n    route: {type: ref, name: shared}\n") ==
        "nutcracker.yml:5: route refers to 'shared', which is not under `routes:` (there are none)");
}

TEST_CASE("listeners: mistakes point at their line") {
  const std::string pools = "listen:\n  tcp: 127.0.0.1:0\npools:\n  p:\n    servers: [127.0.0.1:1]\n";
  CHECK(nutcracker_load(pools + "listeners:\n  - listen: 127.0.0.1:5\n    route: {type: pool, pool: q}\n") ==
        "nutcracker.yml:8: route names pool 'q', which is not under `pools:` (pools: p)");
  CHECK(nutcracker_load(pools + "listeners:\n  - route: {type: local}\n") ==
        "nutcracker.yml:7: listeners[0] needs `listen:` (host:port or unix:/path)");
  CHECK(nutcracker_load(pools + "listeners:\n  - listen: 127.0.0.1:5\n") ==
        "nutcracker.yml:7: listeners[0] needs `route:` (the tree its clients are served by)");
  CHECK(nutcracker_load(pools + "listeners:\n  - listen: 127.0.0.1:5\n    route: {type: local}\n    colour: red\n") ==
        "nutcracker.yml:9: unknown key 'colour' in section 'listeners[0]'");
  CHECK(nutcracker_load(pools + "listeners:\n  - listen: unix:relative\n    route: {type: local}\n") ==
        "nutcracker.yml:7: listen: a unix listener is unix:/absolute/path, got 'unix:relative'");
  CHECK(nutcracker_load(pools + "listeners: {listen: 127.0.0.1:5}\n") ==
        "nutcracker.yml:6: listeners: expected a list, got a mapping");
  CHECK(nutcracker_load(pools + "listeners:\n  - listen: 127.0.0.1:5\n    route: {type: local}\n"
                                "  - listen: 127.0.0.1:5\n    route: {type: local}\n") ==
        "nutcracker.yml:6: listeners: 127.0.0.1:5 is listened on twice (each listener has one address of its own)");
  // Listeners alone are enough: no `listen:` needed.
  CHECK(nutcracker_load("listen:\n  tcp: []\nlisteners:\n  - listen: 127.0.0.1:5\n    route: {type: local}\n") == "");
}
