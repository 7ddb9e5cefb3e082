// `pools:` and `route:`: what a router config reads into, and every mistake
// reported as file:line: message.
#include <doctest/doctest.h>

#include <cstdlib>

#include "load.h"
#include "route_probe.h"
#include "server_list.h"

using namespace ithaca::config;
namespace kinds = ithaca::kinds;

namespace {

std::string router_load(const std::string& yaml, config* out = nullptr) {
  config c;
  std::string error;
  bool ok = load_config_text(yaml, "r.yaml", c, &error);
  CHECK(ok == error.empty());
  if (out) *out = c;
  return error;
}

}  // namespace

TEST_CASE("no route: the local store serves everything") {
  config c;
  CHECK(router_load("cache:\n  memory_limit: 64m\n", &c).empty());
  CHECK_FALSE(c.router.has_route);
  CHECK(c.router.pools.empty());
}

TEST_CASE("a pool and a pool route") {
  config c;
  REQUIRE(router_load("pools:\n"
                      "  main:\n"
                      "    servers: [\"10.0.0.1:11211:3 cache-a\", \"[::1]:11212\", \"unix:/run/mc.sock\"]\n"
                      "    hash: md5\n"
                      "    distribution: modula\n"
                      "    hash_tag: \"{}\"\n"
                      "    hash_stop: true\n"
                      "    protocol: meta\n"
                      "    timeout: 250ms\n"
                      "    connections: 2\n"
                      "    allow_flush: true\n"
                      "route:\n  type: pool\n  pool: main\n  name: front\n",
                      &c) == "");
  REQUIRE(c.router.pools.size() == 1);
  const pool_config& p = c.router.pools[0];
  CHECK(p.name == "main");
  REQUIRE(p.servers.size() == 3);
  CHECK(p.servers[0].address == "10.0.0.1:11211");
  CHECK(p.servers[0].weight == 3);
  CHECK(p.servers[0].name == "cache-a");
  CHECK(p.servers[1].address == "[::1]:11212");
  CHECK(p.servers[1].weight == 1);
  CHECK(p.servers[2].address == "unix:/run/mc.sock");
  CHECK(p.hash == kinds::hash_kind::Md5);
  CHECK(p.dist == kinds::distribution_kind::Modula);
  CHECK(p.hash_tag == "{}");
  CHECK(p.hash_stop);
  CHECK(p.protocol == kinds::backend_protocol::Meta);
  CHECK(p.timeout_ms == 250);
  CHECK(p.connections == 2);
  CHECK(p.allow_flush);
  CHECK(c.router.has_route);
  CHECK(is(c.router.route, "pool"));
  CHECK(pool_of(c.router.route) == "main");
  CHECK(c.router.route.name == "front");
}

TEST_CASE("defaults: md5 over ketama (not twemproxy's fnv1a_64); the protocol learned per connection") {
  config c;
  REQUIRE(router_load("pools:\n  p:\n    servers: [127.0.0.1:1]\nroute: {type: pool, pool: p}\n", &c) == "");
  CHECK(c.router.pools[0].hash == kinds::hash_kind::Md5);
  CHECK(c.router.pools[0].dist == kinds::distribution_kind::Ketama);
  CHECK(c.router.pools[0].protocol == kinds::backend_protocol::Auto);
}

TEST_CASE("protocol: auto, ascii or meta") {
  for (const auto& [text, want] :
       {std::pair{"auto", kinds::backend_protocol::Auto}, std::pair{"ascii", kinds::backend_protocol::Ascii},
        std::pair{"meta", kinds::backend_protocol::Meta}}) {
    config c;
    REQUIRE(router_load(std::string("pools:\n  p:\n    servers: [127.0.0.1:1]\n    protocol: ") + text +
                            "\nroute: {type: pool, pool: p}\n",
                        &c) == "");
    CHECK(c.router.pools[0].protocol == want);
  }
}

TEST_CASE("router mistakes point at their line") {
  CHECK(router_load("pools:\n  p:\n    servers: [127.0.0.1:1]\nroute:\n  type: pool\n  pool: q\n") ==
        "r.yaml:5: route names pool 'q', which is not under `pools:` (pools: p)");
  CHECK(router_load("pools:\n  p:\n    servers: [127.0.0.1:1]\n    hash: md6\n") ==
        "r.yaml:4: hash: expected one of one_at_a_time, md5, crc16, crc32, crc32a, fnv1_64, fnv1a_64, "
        "fnv1_32, fnv1a_32, hsieh, murmur or jenkins, got 'md6'");
  CHECK(router_load("pools:\n  p:\n    servers: [127.0.0.1:1]\n    timeot: 1s\n") ==
        "r.yaml:4: unknown key 'timeot' in section 'pools.p' (did you mean 'timeout'?)");
  CHECK(router_load("pools:\n  p:\n    servers: []\n") == "r.yaml:3: pool 'p' has no servers");
  CHECK(router_load("pools:\n  p:\n    hash: md5\n") == "r.yaml:3: pool 'p' needs `servers:` (a list of host:port)");
  CHECK(router_load("pools:\n  p:\n    servers: [\"127.0.0.1:1\", \"127.0.0.1:1\"]\n") ==
        "r.yaml:3: servers: server 127.0.0.1:1 is listed twice in pool 'p'");
  CHECK(router_load("pools:\n  p:\n    servers: [127.0.0.1:0]\n") ==
        "r.yaml:3: servers: bad server '127.0.0.1:0': port 0 is not a server's port");
  CHECK(router_load("pools:\n  p:\n    servers: [\"127.0.0.1:1:0\"]\n") ==
        "r.yaml:3: servers: bad server '127.0.0.1:1:0': weight must be an integer from 1 to 1000000");
  CHECK(router_load("pools:\n  p:\n    servers: [127.0.0.1:1]\n    hash_tag: \"{\"\n") ==
        "r.yaml:3: pool 'p': hash_tag must be two characters, like \"{}\"");
  CHECK(router_load("route:\n  pool: p\n").starts_with("r.yaml:2: a route needs `type:` (local, pool, ref, prefix, "));
  CHECK(router_load("route:\n  type: pool\n") ==
        "r.yaml:2: a pool route needs `pool:` (the name of a pool under `pools:`)");
  CHECK(router_load("route:\n  type: sideways\n")
            .starts_with("r.yaml:2: unknown route type 'sideways' (types: local, pool,"));
  CHECK(router_load("route: 3\n") == "r.yaml:1: route refers to '3', which is not under `routes:` (there are none)");
  CHECK(router_load("route:\n  type: local\n  children:\n    - type: local\n") ==
        "r.yaml:3: a local route takes no `children:` (it takes nothing but `type:` and `name:`)");
  CHECK(router_load("route:\n  type: all_sync\n  children: 3\n") ==
        "r.yaml:3: children: expected a list of routes, got '3'");
}

TEST_CASE("the sample config/router.yaml parses") {
  const char* path = std::getenv("ITHACA_SAMPLE_ROUTER_CONFIG");
  INFO("run through meson test (sets ITHACA_SAMPLE_ROUTER_CONFIG)");
  REQUIRE(path != nullptr);
  config c;
  std::string error;
  REQUIRE_MESSAGE(load_config(path, c, &error), error);
  CHECK(c.router.has_route);
  REQUIRE(c.router.pools.size() == 1);
  CHECK(c.router.pools[0].servers.size() == 2);
}

TEST_CASE("a server written without a port takes 11211 and says it was not written") {
  backend_server b;
  std::string error;
  REQUIRE(parse_backend_server("cache-a", b, &error));
  CHECK(b.address == "cache-a:11211");
  CHECK_FALSE(b.port_written);
  CHECK(b.written == "cache-a");
  backend_server v6;
  REQUIRE(parse_backend_server("[::1]:2", v6, &error));
  CHECK(v6.address == "[::1]:2");
  CHECK(v6.port_written);
  backend_server weighted;
  REQUIRE(parse_backend_server("10.0.0.1:11311:3 a", weighted, &error));
  CHECK(weighted.port_written);
  CHECK(weighted.weight == 3);
  backend_server zero;
  CHECK_FALSE(parse_backend_server("10.0.0.1:0", zero, &error));
  CHECK(error == "bad server '10.0.0.1:0': port 0 is not a server's port");
}
