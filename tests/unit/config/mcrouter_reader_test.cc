// An mcrouter JSON config read as it is: comment blanking, the format's
// detection, pools, every short form and route type, and every refusal as
// file:line: message.
#include <doctest/doctest.h>

#include "load.h"
#include "mcrouter_root.h"
#include "route_probe.h"
#include "mcrouter_reader.h"
#include "route_kind_info.h"
#include "cli.h"

using namespace ithaca::config;
namespace kinds = ithaca::kinds;

namespace {

const char* kPools = R"({
  "pools": {
    "A": {"servers": ["127.0.0.1:5001", "127.0.0.1:5002", "127.0.0.1:5003"]},
    "B": {"servers": ["127.0.0.1:6001"], "server_timeout": 250}
  },
)";  // lines 1-5

std::string load_json(const std::string& text, config* out = nullptr, const std::string& name = "m.json") {
  config c;
  std::string error;
  bool ok = load_config_text(text, name, c, &error);
  CHECK(ok == error.empty());
  if (out) *out = c;
  return error;
}

// kPools, then `"route": ROUTE` (line 6) and the closing brace.
std::string with_route(const std::string& route, config* out = nullptr) {
  return load_json(std::string(kPools) + "  \"route\": " + route + "\n}\n", out);
}

route_config route_of(const std::string& route, config* out = nullptr) {
  config c;
  const std::string error = with_route(route, &c);
  INFO(error);
  REQUIRE(error.empty());
  CHECK(c.router.format == "mcrouter");
  if (out) *out = c;
  return written_route(c);
}

const pool_config& pool_named(const config& c, const std::string& name) {
  for (const pool_config& p : c.router.pools) {
    if (p.name == name) return p;
  }
  FAIL("no pool " << name);
  return c.router.pools.front();
}

const route_config& child(const route_config& r, std::string_view role, size_t i = 0) {
  auto l = r.with_role(role);
  REQUIRE(l.size() > i);
  return *l[i];
}

}  // namespace

TEST_CASE("comments are blanked outside strings; lines and newlines stay") {
  std::string out;
  int line = 0;
  std::string why;
  REQUIRE(blank_json_comments("{\"a\": 1, // one\n\t\"b\": \"x//y /*z*/\" /* two\nlines */}\n", out, &line, &why));
  CHECK(out == "{\"a\": 1,       \n \"b\": \"x//y /*z*/\"       \n        }\n");
  REQUIRE(blank_json_comments("{\"q\": \"say \\\"//\\\" here\"} // tail", out, &line, &why));
  CHECK(out == "{\"q\": \"say \\\"//\\\" here\"}        ");
  CHECK_FALSE(blank_json_comments("{\n\n /* never closed\n}", out, &line, &why));
  CHECK(line == 3);
  CHECK(why == "a /* comment is never closed");
  CHECK_FALSE(blank_json_comments("{\n#include \"pools.json\"\n}", out, &line, &why));
  CHECK(line == 2);
  CHECK(why.starts_with("'#' outside a string"));
  REQUIRE(blank_json_comments("{\"k\": \"a#b\"}", out, &line, &why));  // inside a string: kept
}

TEST_CASE("the format is told by the name or by the text") {
  CHECK(looks_like_mcrouter_json("anything", "/etc/mcrouter/config.json"));
  CHECK(looks_like_mcrouter_json("// mcrouter\n{\n  \"pools\": {}}", "conf"));
  CHECK(looks_like_mcrouter_json("  {\"route\": \"NullRoute\"}", "conf"));
  CHECK_FALSE(looks_like_mcrouter_json("pools:\n  a: {servers: [x]}\n", "conf.yaml"));
  CHECK_FALSE(looks_like_mcrouter_json("{pools: {a: {servers: [\"127.0.0.1:1\"]}}, route: pool:a}", "conf"));
  CHECK_FALSE(looks_like_mcrouter_json("# ithaca\nroute: local\n", "conf"));
  // ithaca's own config written as JSON names one of its sections.
  CHECK_FALSE(
      looks_like_mcrouter_json("{\"listen\": {\"tcp\": \"127.0.0.1:1\"}, \"route\": \"local\"}", "ithaca.json"));
  CHECK(looks_like_mcrouter_json("{\"route\": \"NullRoute\"", "conf"));  // broken JSON: the mcrouter reader says where
  // Read through the same entry point as ithaca's YAML.
  config c;
  REQUIRE(load_json("{\"pools\": {\"A\": {\"servers\": [\"127.0.0.1:1\"]}}, \"route\": \"PoolRoute|A\"}", &c,
                    "noext") == "");
  CHECK(c.router.format == "mcrouter");
}

TEST_CASE("a pool: mcrouter's defaults (Ch3, ascii, 1 s, the hash stop) and its options") {
  config c;
  route_config r = route_of("\"PoolRoute|A\"", &c);
  CHECK(is(r, "pool"));
  CHECK(pool_of(r) == "A");
  CHECK(describe_options(r) == "pool pool=A reliable_deletes=true");  // mcrouter's asynclog
  CHECK(r.line == 6);
  const pool_config& a = pool_named(c, "A");
  REQUIRE(a.servers.size() == 3);
  CHECK(a.servers[1].address == "127.0.0.1:5002");
  CHECK(a.servers[1].line == 3);
  CHECK(a.dist == kinds::distribution_kind::Ch3);
  CHECK(a.protocol == kinds::backend_protocol::Ascii);
  CHECK(a.hash_stop);
  CHECK(a.timeout_ms == 1000);
  CHECK(a.connect_timeout_ms == 1000);
  route_of("\"PoolRoute|B\"", &c);
  CHECK(pool_named(c, "B").timeout_ms == 250);
  CHECK(pool_named(c, "B").connect_timeout_ms == 250);
  // Only the pools routes use are built.
  CHECK(c.router.pools.size() == 1);
}

TEST_CASE("PoolRoute objects: hash Crc32, WeightedCh3 from pool weights, asynclog, inline pools, inherit") {
  config c;
  route_config r = route_of(R"({"type": "PoolRoute", "pool": "A", "hash": "Crc32", "asynclog": false})", &c);
  CHECK(pool_named(c, pool_of(r)).dist == kinds::distribution_kind::McrouterCrc32);
  CHECK(describe_options(r).ends_with(" reliable_deletes=false"));
  r = route_of(R"({"type": "PoolRoute", "pool": "A", "hash": {"hash_func": "WeightedCh3", "weights": [1, 0.5, 0]}})",
               &c);
  const pool_config& w = pool_named(c, pool_of(r));
  CHECK(w.dist == kinds::distribution_kind::WeightedCh3);
  CHECK(w.servers[1].fraction == 0.5);
  CHECK(w.servers[2].fraction == 0);
  r = route_of(R"({"type": "PoolRoute", "pool": {"name": "C", "servers": ["[::1]:7001"], "weights": [0.25]}})", &c);
  CHECK(pool_of(r) == "C");
  CHECK(pool_named(c, "C").dist == kinds::distribution_kind::WeightedCh3);
  CHECK(pool_named(c, "C").servers[0].fraction == 0.25);
  CHECK(pool_named(c, "C").servers[0].address == "[::1]:7001");
  // One pool placed two ways: two pool configs over the same servers.
  r = route_of(
      R"({"type": "AllSyncRoute", "children": ["PoolRoute|A", {"type": "PoolRoute", "pool": "A", "hash": "Crc32"}]})",
      &c);
  CHECK(pool_of(child(r, "", 0)) == "A");
  CHECK(pool_of(child(r, "", 1)) == "A~mcrouter_crc32");
  CHECK(pool_named(c, "A~mcrouter_crc32").dist == kinds::distribution_kind::McrouterCrc32);
  // inherit: the parent's keys where the pool has none.
  REQUIRE(load_json(R"({"pools": {"base": {"servers": ["127.0.0.1:1"], "server_timeout": 300},
                        "child": {"inherit": "base", "connect_timeout": 50}},
                        "route": "PoolRoute|child"})",
                    &c) == "");
  CHECK(pool_named(c, "child").timeout_ms == 300);
  CHECK(pool_named(c, "child").connect_timeout_ms == 50);
  CHECK(pool_named(c, "child").servers.size() == 1);
  // A PoolRoute's rates: a rate_limit in front of it.
  r = route_of(R"({"type": "PoolRoute", "pool": "B", "rates": {"gets_rate": 10}})", &c);
  CHECK(is(r, "rate_limit"));
  CHECK(pool_of(child(r, "target")) == "B");
  CHECK(describe_options(r) == "rate_limit rates=get:10 burst=get:10");
}

TEST_CASE("short forms: Pool|name is each server, Type|... nests") {
  config c;
  route_config r = route_of("\"AllSyncRoute|Pool|A\"", &c);
  CHECK(std::string(kind_name(r)) == "all_sync");
  REQUIRE(r.children.size() == 3);
  CHECK(is(r.children[2], "pool"));
  CHECK(pool_of(r.children[2]) == "A#3");
  REQUIRE(pool_named(c, "A#3").servers.size() == 1);
  CHECK(pool_named(c, "A#3").servers[0].address == "127.0.0.1:5003");
  CHECK(is(route_of("\"HashRoute|Pool|A\""), "hash"));
  CHECK(is(route_of("\"FailoverRoute|Pool|A\""), "failover"));
  CHECK(std::string(kind_name(route_of("\"MissFailoverRoute|Pool|A\""))) == "miss_failover");
  CHECK(std::string(kind_name(route_of("\"RandomRoute|Pool|A\""))) == "random");
  CHECK(std::string(kind_name(route_of("\"AllAsyncRoute|PoolRoute|B\""))) == "all_async");
  CHECK(std::string(kind_name(route_of("\"AllInitialRoute|Pool|A\""))) == "all_initial");
  CHECK(std::string(kind_name(route_of("\"AllMajorityRoute|Pool|A\""))) == "all_majority");
  CHECK(std::string(kind_name(route_of("\"AllFastestRoute|Pool|A\""))) == "all_fastest");
  CHECK(std::string(kind_name(route_of("\"NullRoute\""))) == "null");
  route_config e = route_of("\"ErrorRoute|try later\"");
  CHECK(std::string(kind_name(e)) == "error");
  CHECK(describe_options(e) == "error message=try later result=mc_res_local_error");
  // A list of one server, or of one route, is that route (mcrouter's singleton rule).
  CHECK(is(route_of("\"FailoverRoute|PoolRoute|B\""), "pool"));
  CHECK(is(route_of("\"HashRoute|Pool|B\""), "pool"));
  CHECK(is(route_of("[\"PoolRoute|B\"]"), "pool"));
}

TEST_CASE("route objects among a pool's servers take their place (mcrouter's makePool)") {
  const std::string pools = R"({"pools": {
    "M": {"servers": ["127.0.0.1:1", {"type": "ErrorRoute", "response": "mid"}, "127.0.0.1:3"],
          "weights": [1, 0.25, 0.5], "failure_domains": [7, 8, 9]},
    "R": {"servers": [{"type": "NullRoute"}]}
  },
)";
  auto route_in = [&](const std::string& route, config* c) {
    const std::string error = load_json(pools + "  \"route\": " + route + "\n}\n", c);
    INFO(error);
    REQUIRE(error.empty());
    return written_route(*c);
  };
  config c;
  // Pool|M: the three destinations in order, the object as its route.
  route_config all = route_in("\"AllSyncRoute|Pool|M\"", &c);
  REQUIRE(all.children.size() == 3);
  CHECK(pool_of(all.children[0]) == "M#1");
  CHECK(describe_options(all.children[1]) == "error message=mid result=mc_res_local_error");
  CHECK(pool_of(all.children[2]) == "M#2");
  CHECK(pool_named(c, "M#2").servers[0].address == "127.0.0.1:3");
  CHECK(pool_named(c, "M#2").servers[0].failure_domain == 9);  // the third place's domain
  // A PoolRoute over it: a HashRoute over the places, the pool's weights by place.
  route_config h = route_in(R"({"type": "PoolRoute", "pool": "M", "hash": "WeightedCh3"})", &c);
  CHECK(describe_options(h) == "hash hash=md5 distribution=weighted_ch3 salt= weights=1,0.25,0.5");
  REQUIRE(h.children.size() == 3);
  CHECK(is(h.children[1], "error"));
  CHECK(describe_options(h.children[0]) == "pool pool=M#1 reliable_deletes=true");  // mcrouter's asynclog
  CHECK(describe_options(route_in(R"({"type": "PoolRoute", "pool": "M", "hash": "Crc32"})", &c)) ==
        "hash hash=md5 distribution=mcrouter_crc32 salt= weights=");
  // One place is that place.
  CHECK(std::string(kind_name(route_in("\"PoolRoute|R\"", &c))) == "null");
  // What ithaca places per server of one pool is refused over it.
  CHECK(load_json(pools + R"(  "route": {"type": "PoolRoute", "pool": "M", "shadows": []}
}
)") == "m.json:6: PoolRoute: shadows over pool 'M', which has route objects among its servers, is not supported by ithaca");
  CHECK(load_json(R"({"pools": {"A": {"servers": ["127.0.0.1:1", 5]}}, "route": "PoolRoute|A"})") ==
        "m.json:1: pool 'A': server #1 is not a string/object");
  CHECK(load_json(R"({"pools": {"A": {"servers": ["127.0.0.1:1", {"type": "NoSuchRoute"}]}}, "route": "PoolRoute|A"})")
            .starts_with("m.json:1: Unknown RouteHandle: NoSuchRoute"));
  // HashRoute's WeightedCh3 wants its weights (mcrouter's words).
  CHECK(load_json(R"({"pools": {"A": {"servers": ["127.0.0.1:1"]}},
  "route": {"type": "HashRoute", "children": ["PoolRoute|A", "PoolRoute|A"], "hash_func": "WeightedCh3"}})") ==
        "m.json:2: WeightedChHashFunc: not an object or no weights");
}

TEST_CASE("route objects and their mcrouter option names") {
  route_config p = route_of(R"({"type": "PrefixSelectorRoute", "policies": {"a:": "PoolRoute|A", "b:": "PoolRoute|B"},
                                 "wildcard": "PoolRoute|A"})");
  CHECK(is(p, "prefix"));
  CHECK(describe_options(p) == "prefix prefixes=a:,b:");
  CHECK(pool_of(child(p, "prefix", 1)) == "B");
  CHECK(pool_of(child(p, "default")) == "A");

  route_config o = route_of(R"({"type": "OperationSelectorRoute", "default_policy": "PoolRoute|A",
                                 "operation_policies": {"get": "PoolRoute|B", "gets": "PoolRoute|B", "delete": "NullRoute"}})");
  CHECK(is(o, "operation"));
  CHECK(pool_of(child(o, "get")) == "B");
  CHECK(std::string(kind_name(child(o, "delete"))) == "null");
  CHECK(pool_of(child(o, "default")) == "A");
  CHECK(o.with_role("get").size() == 1);
  route_config nodef = route_of(R"({"type": "OperationSelectorRoute", "operation_policies": {"set": "PoolRoute|A"}})");
  CHECK(std::string(kind_name(child(nodef, "get"))) == "error");  // mcrouter answers an error
  CHECK(pool_of(child(nodef, "set")) == "A");

  route_config f = route_of(R"({"type": "FailoverRoute", "children": ["PoolRoute|A", "PoolRoute|B"],
                                 "failover_errors": {"gets": ["timeout"], "updates": ["mc_res_tko"]},
                                 "failover_limit": {"rate": 0.2, "burst": 9.8}})");
  CHECK(is(f, "failover"));
  // gets and updates: ithaca's get and set classes; mc_res_ dropped
  CHECK(describe_options(f) ==
        "failover failover_errors=get:timeout;set:tko failover_limit=0.2/9.8 failover_policy=in_order "
        "failover_tag=false enable_lease_pairing=false");
  // InOrderPolicy's max_tries bounds the error tries (every child is in the order).
  CHECK(describe_options(route_of(R"({"type": "FailoverRoute", "children": ["PoolRoute|A", "PoolRoute|B"],
                                      "failover_policy": {"type": "InOrderPolicy", "max_tries": 1,
                                                          "exclude_errors": ["mc_res_timeout"]}})")) ==
        "failover failover_errors= failover_limit=0/1000 failover_policy=in_order/1 failover_tag=false "
        "enable_lease_pairing=false");
  CHECK(describe_options(route_of(R"({"type": "FailoverRoute", "children": ["PoolRoute|A", "PoolRoute|B"],
                                      "failover_errors": ["remote_error"]})")) ==
        "failover failover_errors=remote_error failover_limit=0/1000 failover_policy=in_order failover_tag=false "
        "enable_lease_pairing=false");
  // An empty list: no failover (for that class, or for every class).
  CHECK(describe_options(route_of(R"({"type": "FailoverRoute", "children": ["PoolRoute|A", "PoolRoute|B"],
                                      "failover_errors": {"gets": ["remote_error"], "updates": []}})"))
            .starts_with("failover failover_errors=get:remote_error;set:none "));
  CHECK(describe_options(route_of(R"({"type": "FailoverRoute", "children": ["PoolRoute|A", "PoolRoute|B"],
                                      "failover_errors": []})"))
            .starts_with("failover failover_errors=none "));
  // Lease pairing needs a name (mcrouter's): the route is then a named one.
  config paired;
  route_of(R"({"type": "FailoverRoute", "children": ["PoolRoute|A", "PoolRoute|B"],
               "failover_tag": true, "enable_lease_pairing": true, "name": "f",
               "failover_policy": {"type": "DeterministicOrderPolicy", "max_tries": 5,
                                   "max_error_tries": 9, "hash": {"hash_func": "WeightedCh3",
                                   "weights": [0.5, 1]}}})",
           &paired);
  REQUIRE(paired.router.named_routes.size() == 1);
  CHECK(describe_options(paired.router.named_routes[0]) ==
        "failover failover_errors= failover_limit=0/1000 failover_policy=deterministic_order/5/5/weighted "
        "failover_tag=true enable_lease_pairing=true");

  // SaltedFailoverRoute: the pool's route, then each of its servers; a
  // WeightedCh3 list longer than the pool is read for its first servers.
  config sc;
  route_config sf = route_of(R"({"type": "SaltedFailoverRoute", "pool": "A",
                                  "hash": {"hash_func": "WeightedCh3", "weights": [0.5, 1, 0.7, 0.9]},
                                  "failover_policy": {"type": "DeterministicOrderPolicy", "max_tries": 3,
                                                      "max_error_tries": 2}})",
                             &sc);
  CHECK(is(sf, "salted_failover"));
  REQUIRE(sf.children.size() == 4);
  CHECK(pool_named(sc, pool_of(sf.children[0])).dist == kinds::distribution_kind::WeightedCh3);
  CHECK(pool_named(sc, pool_of(sf.children[0])).servers[2].fraction == 0.7);
  CHECK(pool_named(sc, pool_of(sf.children[3])).servers.size() == 1);
  CHECK(describe_options(sf).find("failover_policy=deterministic_order/3/2/weighted") != std::string::npos);

  route_config g =
      route_of(R"({"type": "FailoverWithExptimeRoute", "normal": "PoolRoute|A", "failover": "PoolRoute|B"})");
  CHECK(is(g, "failover_exptime"));
  CHECK(describe_options(g).ends_with(" exptime=60"));  // mcrouter's default
  CHECK(pool_of(child(g, "normal")) == "A");
  CHECK(pool_of(child(g, "failover")) == "B");
  CHECK(
      describe_options(
          route_of(
              R"({"type": "FailoverWithExptimeRoute", "normal": "PoolRoute|A", "failover": ["PoolRoute|B", "NullRoute"],
                     "failover_exptime": 5})"))
          .ends_with(" exptime=5"));
  CHECK(is(route_of(R"({"type": "FailoverWithExptimeRoute", "normal": "PoolRoute|A"})"), "pool"));

  route_config m = route_of(R"({"type": "MissFailoverRoute", "children": ["PoolRoute|A", "PoolRoute|B"]})");
  CHECK(describe_options(m) == "miss_failover return_best_on_error=false");  // mcrouter's default
  CHECK(
      describe_options(route_of(
          R"({"type": "MissFailoverRoute", "children": ["PoolRoute|A", "PoolRoute|B"], "return_best_on_error": true})")) ==
      "miss_failover return_best_on_error=true");

  route_config w = route_of(R"({"type": "WarmUpRoute", "cold": "PoolRoute|A", "warm": "PoolRoute|B", "exptime": 30})");
  CHECK(std::string(kind_name(w)) == "warm_up");
  CHECK(pool_of(child(w, "cold")) == "A");
  CHECK(pool_of(child(w, "warm")) == "B");
  CHECK(describe_options(w) == "warm_up exptime=30");

  route_config s = route_of(R"({"type": "ShadowRoute", "children": "PoolRoute|A",
                                 "shadows": [{"target": "PoolRoute|B", "key_fraction_range": [0, 0.1], "requests_fraction": 0.5}]})");
  CHECK(is(s, "shadow"));
  CHECK(pool_of(child(s, "normal")) == "A");
  CHECK(pool_of(child(s, "shadow")) == "B");
  CHECK(describe_options(s) == "shadow shadows=[0,0.1)x0.5");

  route_config h =
      route_of(R"({"type": "HashRoute", "children": ["PoolRoute|A", "PoolRoute|B"], "hash_func": "Crc32"})");
  CHECK(is(h, "hash"));
  CHECK(describe_options(h) == "hash hash=md5 distribution=mcrouter_crc32 salt= weights=");
  CHECK(describe_options(route_of(R"({"type": "HashRoute", "children": ["PoolRoute|A", "PoolRoute|B"]})")) ==
        "hash hash=md5 distribution=ch3 salt= weights=");
  CHECK(std::string(kind_name(route_of(R"({"type": "HashRoute", "children": []})"))) == "error");

  route_config x =
      route_of(R"({"type": "ModifyExptimeRoute", "target": "PoolRoute|A", "exptime": 10, "action": "min"})");
  CHECK(describe_options(x) == "modify_exptime action=min exptime=10");
  CHECK(pool_of(child(x, "target")) == "A");
  CHECK(is(route_of(R"({"type": "ModifyExptimeRoute", "target": "PoolRoute|A", "exptime": 0, "action": "min"})"),
           "pool"));

  route_config rl = route_of(R"({"type": "RateLimitRoute", "target": "PoolRoute|A", "fallback": "ErrorRoute",
                                  "rates": {"gets_rate": 100, "sets_rate": 5, "sets_burst": 20}})");
  CHECK(is(rl, "rate_limit"));
  // a burst defaults to its rate; deletes unlimited
  CHECK(describe_options(rl) == "rate_limit rates=get:100,set:5 burst=get:100,set:20");
  CHECK(std::string(kind_name(child(rl, "fallback"))) == "error");

  CHECK(describe_options(route_of(R"({"type": "ErrorRoute", "response": "nope", "enable_logging": false})")) ==
        "error message=nope result=mc_res_local_error");
  CHECK(std::string(kind_name(route_of(R"({"type": "AllSyncRoute", "children": []})"))) == "null");
}

TEST_CASE("named handles become named routes; routes with one entry") {
  config c;
  REQUIRE(load_json(R"({
    "pools": {"A": {"servers": ["127.0.0.1:1"]}, "B": {"servers": ["127.0.0.1:2"]}},
    "named_handles": [
      {"type": "PoolRoute", "name": "route:A", "pool": "A"},
      {"type": "AllSyncRoute", "name": "route:all", "children": ["route:A", "PoolRoute|B", {"type": "NullRoute", "name": "nil"}]}
    ],
    "route": "route:all"
  })",
                    &c) == "");
  CHECK(is(written_route(c), "ref"));
  CHECK(written_route(c).name == "route:all");
  CHECK(written_route(c).line == 7);
  REQUIRE(c.router.named_routes.size() == 3);
  const route_config* all = nullptr;
  for (const route_config& r : c.router.named_routes) {
    if (r.name == "route:all") all = &r;
  }
  REQUIRE(all != nullptr);
  CHECK(std::string(kind_name(*all)) == "all_sync");
  CHECK(is(all->children[0], "ref"));
  CHECK(is(all->children[2], "ref"));
  CHECK(all->children[2].name == "nil");
  // The object form, and `routes` with one entry of aliases.
  REQUIRE(load_json(R"({
    "pools": {"A": {"servers": ["127.0.0.1:1"]}},
    "named_handles": {"main": {"type": "PoolRoute", "pool": "A"}},
    "routes": [{"aliases": ["/a/b/", "/a/c/"], "route": "main"}]
  })",
                    &c) == "");
  // A routing_prefix root (routing_prefix_route.cc) over the named route.
  CHECK(is(c.router.route, "routing_prefix"));
  CHECK(describe_options(c.router.route) ==
        "routing_prefix routes=/a/b/,/a/c/ default_route= send_invalid_route_to_default=false flush_all_pools=true");
  REQUIRE(c.router.route.children.size() == 1);
  CHECK(is(c.router.route.children[0], "ref"));
  CHECK(is(c.router.named_routes[0], "pool"));
  REQUIRE(load_json(R"({"pools": {"A": {"servers": ["127.0.0.1:1"]}}, "routes": {"/x/y/": "PoolRoute|A"}})", &c) == "");
  CHECK(is(c.router.route, "routing_prefix"));
  REQUIRE(c.router.route.children.size() == 1);
  CHECK(is(c.router.route.children[0], "pool"));
}

TEST_CASE("what ithaca cannot do as mcrouter would is refused at its line") {
  CHECK(with_route("\"PoolRoute|Zebra\"") == "m.json:6: Can not read pool: Zebra (it is not under `pools`)");
  CHECK(with_route("\"PoolRoute|AA\"") ==
        "m.json:6: Can not read pool: AA (it is not under `pools`; did you mean 'A'?)");
  CHECK(with_route("\"KeyParseRoute|Pool|A\"") == "m.json:6: mcrouter's KeyParseRoute is not supported by ithaca");
  CHECK(with_route("{\"type\": \"FailoverRoutes\", \"children\": []}") ==
        "m.json:6: Unknown RouteHandle: FailoverRoutes line: 6 (did you mean 'FailoverRoute'?)");
  // mcrouter's line: the object's "type", not where the object opens.
  CHECK(with_route("{\n  \"type\": \"XYZRoute\",\n  \"children\": []}") ==
        "m.json:7: Unknown RouteHandle: XYZRoute line: 7");
  CHECK(with_route("{\"type\": \"L1L2CacheRoute\", \"l1\": \"PoolRoute|A\", \"l2\": \"PoolRoute|B\"}") ==
        "m.json:6: L1L2CacheRoute: no upgradingL1Exptime");
  CHECK(with_route("{\"type\": \"FailoverRoute\",\n \"children\": [\"PoolRoute|A\", \"PoolRoute|B\"],\n "
                   "\"failover_policy\": {\"type\": \"LeastFailuresPolicy\"}}") ==
        "m.json:8: Failover: LeastFailuresPolicy must specify 'max_tries' field");
  CHECK(with_route("{\"type\": \"FailoverRoute\",\n \"children\": [\"PoolRoute|A\", \"PoolRoute|B\"],\n "
                   "\"failover_policy\": {\"type\": \"DeterministicOrderPolicy\", \"max_tries\": 2}}") ==
        "m.json:8: Failover: DeterministicOrderPolicy must specify 'max_error_tries' field");
  CHECK(with_route("{\"type\": \"FailoverRoute\",\n \"children\": [\"PoolRoute|A\", \"PoolRoute|B\"],\n "
                   "\"failover_policy\": {\"type\": \"RendezvousPolicy\"}}") ==
        "m.json:8: FailoverRendezvousPolicy: tags needed for Rendezvous hash route");
  CHECK(with_route("{\"type\": \"FailoverRoute\",\n \"children\": [\"PoolRoute|A\", \"PoolRoute|B\"],\n "
                   "\"failover_policy\": {\"type\": \"RendezvousPolicy\", \"tags\": [\"a\"], "
                   "\"hash\": \"WeightedRendezvous\"}}")
            .starts_with("m.json:8: failover_policy: RendezvousPolicy's hash"));
  // mcrouter merges the route's own `tags` and `hash` into the policy.
  CHECK(with_route("{\"type\": \"FailoverRoute\",\n \"children\": [\"PoolRoute|A\", \"PoolRoute|B\"],\n "
                   "\"hash\": \"WeightedRendezvous\", \"tags\": [\"a\"],\n "
                   "\"failover_policy\": {\"type\": \"RendezvousPolicy\"}}") ==
        "m.json:9: WeightedRendezvousHashFunc: no weights");
  CHECK(with_route("{\"type\": \"FailoverRoute\",\n \"children\": [\"PoolRoute|A\", \"PoolRoute|B\"],\n "
                   "\"hash\": \"WeightedRendezvous\", \"tags\": [\"a\"],\n "
                   "\"failover_policy\": {\"type\": \"RendezvousPolicy\", \"weights\": [1, 2]}}") ==
        "m.json:9: WeightedRendezvousHash: number of weights doesn't match number of end points.");
  CHECK(with_route("{\"type\": \"FailoverRoute\", \"children\": [\"PoolRoute|A\", \"PoolRoute|B\"],\n "
                   "\"hash\": \"Ch3\",\n \"failover_policy\": {\"type\": \"DeterministicOrderPolicy\", "
                   "\"max_tries\": 2, \"max_error_tries\": 2}}")
            .starts_with("m.json:7: Failover: DeterministicOrderPolicy: the route's hash 'Ch3' is not an object"));
  CHECK(with_route("{\"type\": \"FailoverRoute\", \"children\": [\"PoolRoute|A\", \"PoolRoute|B\"], "
                   "\"enable_lease_pairing\": true}") ==
        "m.json:6: Failover: name is required when lease pairing is enabled");
  CHECK(with_route("{\"type\": \"PoolRoute\", \"pool\": \"A\",\n  \"shadows\": 5}") ==
        "m.json:7: PoolRoute: shadows must be an array.");
  CHECK(with_route("{\"type\": \"PoolRoute\", \"pool\": \"A\", \"hash\": {\"hash_func\": \"Ch3\", \"salt\": \"x\"}}") ==
        "m.json:6: PoolRoute hash: a salt changes placement and is not supported by ithaca");
  CHECK(with_route("{\"type\": \"ErrorRoute\", \"result\": \"mc_res_found\"}")
            .starts_with("m.json:6: ErrorRoute: result 'mc_res_found' is not supported by ithaca"));
  CHECK(
      with_route("{\"type\": \"OperationSelectorRoute\", \"operation_policies\": {\"get\": \"PoolRoute|A\", \"gets\": "
                 "\"PoolRoute|B\"}}") ==
      "m.json:6: OperationSelectorRoute: 'get' and 'gets' are one class for ithaca (get) and must have the same route");
  CHECK(with_route("{\"type\": \"OperationSelectorRoute\", \"operation_policies\": {\"flushall\": \"PoolRoute|A\"}}")
            .starts_with("m.json:6: OperationSelectorRoute: operation 'flushall' cannot be selected by ithaca"));
  // Over several children (one per server of A) a ShadowRoute is a list, as
  // in mcrouter: where one route is expected, that is an error.
  CHECK(with_route("{\"type\": \"ShadowRoute\", \"children\": \"Pool|A\", \"shadows\": []}") ==
        "m.json:6: route: 3 routes where one is expected");
  CHECK(with_route("{\"type\": \"ShadowRoute\", \"children\": \"PoolRoute|A\", \"shadows\": [{\"target\": "
                   "\"PoolRoute|B\", \"key_fraction_range\": [0.5, 0.1]}]}") ==
        "m.json:6: ShadowRoute: invalid key_fraction_range (two numbers, 0 <= start <= end <= 1)");
  CHECK(with_route("{\"type\": \"WarmUpRoute\", \"cold\": \"PoolRoute|A\"}") == "m.json:6: WarmUpRoute: no warm route");
  CHECK(with_route("\"PrefixSelectorRoute\"").starts_with("m.json:6: PrefixSelectorRoute is only read at the top"));
  CHECK(with_route("[\"PoolRoute|A\", \"PoolRoute|B\"]") == "m.json:6: route: 2 routes where one is expected");
  // JSONM: expanded first (jsonm_test.cc), then read; errors at the file's lines.
  CHECK(with_route("\"@int(5)\"") == "m.json:6: Unknown RouteHandle: 5");
  CHECK(with_route("\"PoolRoute|%pool%\"") ==
        "m.json:6: Raw object property 'route': Param in string: 'pool' not found");
  CHECK(load_json("{\n\"macros\": {},\n\"route\": \"NullRoute\"}") == "");
  CHECK(load_json("{\n\"route\": \"NullRoute\",\n\"routing_options\": {}}") ==
        "m.json:3: `routing_options` is not supported by ithaca (it reads pools, regional_pools, route, routes and named_handles)");
  CHECK(load_json("{\n  #include \"x.json\"\n}").starts_with("m.json:2: '#' outside a string"));
  CHECK(load_json("{\n  /* open\n\n") == "m.json:2: a /* comment is never closed");
  // Pools.
  CHECK(load_json("{\"pools\": {\"A\": {\"servers\": [\"127.0.0.1:1\"],\n \"protocol\": \"caret\"}}, \"route\": "
                  "\"PoolRoute|A\"}") == "m.json:2: pool 'A': protocol 'caret' is not supported by ithaca (ascii)");
  CHECK(load_json("{\"pools\": {\"A\": {\"servers\": [\n\"127.0.0.1:1:caret\"]}}, \"route\": \"PoolRoute|A\"}") ==
        "m.json:2: pool 'A': server '127.0.0.1:1:caret': only ascii without TLS is supported by ithaca");
  CHECK(load_json("{\"pools\": {\"A\": {\"servers\": [\"127.0.0.1:1:ascii:plain\"]}}, \"route\": \"PoolRoute|A\"}") ==
        "");
  CHECK(load_json("{\"pools\": {\"A\": {\"servers\": [\"127.0.0.1:1\"],\n \"tko_tracker\": {}}}, \"route\": "
                  "\"PoolRoute|A\"}") == "m.json:2: pool 'A': option 'tko_tracker' is not supported by ithaca");
  CHECK(
      load_json(
          "{\"pools\": {\"A\": {\"servers\": [\"127.0.0.1:1\"], \"weights\": [1, 2]}}, \"route\": \"PoolRoute|A\"}") ==
      "m.json:1: pool 'A': weights must be a list of one number per server");
  CHECK(load_json(
            "{\"pools\": {\"A\": {\"inherit\": \"B\"}, \"B\": {\"inherit\": \"A\"}}, \"route\": \"PoolRoute|A\"}") ==
        "m.json:1: Cycle in pool inheritance");
  // Named handles.
  CHECK(load_json("{\"pools\": {},\n \"named_handles\": {\"x\": {\"type\": \"AllSyncRoute\", \"children\": "
                  "[\"x\"]}},\n \"route\": \"x\"}") == "m.json:2: named handle 'x' refers to itself");
  CHECK(
      load_json("{\"route\": \"NullRoute\", \"route\": \"NullRoute\"}").starts_with("m.json:1: duplicate key 'route'"));
  CHECK(load_json("{\"pools\": {}}") == "m.json:1: an mcrouter config needs `route` or `routes`");
  // Routing prefixes: mcrouter's form, each given once.
  CHECK(load_json("{\"routes\": [{\"aliases\": [\"/a/a/\"], \"route\": \"NullRoute\"},\n {\"aliases\": [\"a/a\"], "
                  "\"route\": \"NullRoute\"}]}") == "m.json:2: routes: the routing prefix /a/a/ is given twice");
  CHECK(load_json("{\"routes\": {\"/a/\": \"NullRoute\"}}") ==
        "m.json:1: Routing prefix (/a/) should be of the form /region/cluster/");
  CHECK(load_json("{\"route\": \"NullRoute\"").starts_with("m.json:1: "));  // a syntax error, with its line
}

TEST_CASE("PoolRoute options and pools as mcrouter takes them") {
  config c;
  // shadows: each kept shadow copies the keys of the servers its index_range
  // names; what mcrouter leaves out (no target, a target naming nothing, a
  // bad range, not an object) ithaca leaves out too.
  route_config s = route_of(R"({"type": "PoolRoute", "pool": "A", "shadows": [
      {"target": "PoolRoute|B", "index_range": [0, 2], "key_fraction_range": [0, 0.1]},
      {"target": "PoolRoute|B", "keys_to_shadow": ["k1", "k2"]},
      {"target": "do_not_exist", "index_range": [0, 1], "key_fraction_range": [0, 1]},
      {"target": "NullRoute", "index_range": [0, 1], "key_fraction_range": [-1, 15]},
      {"target": "NullRoute", "index_range": 1, "key_fraction_range": 2},
      {"target": "NullRoute", "key_fraction_range": [0, 1]},
      12345, {}, []]})");
  CHECK(is(s, "shadow"));
  CHECK(pool_of(child(s, "normal")) == "A");
  CHECK(s.with_role("shadow").size() == 2);
  CHECK(describe_options(s) == "shadow shadows=[0,0.1)x1 servers:[0,2),[0,0)x1 keys:2 of A");
  // no usable shadow: the pool alone
  CHECK(is(route_of(R"({"type": "PoolRoute", "pool": "A", "shadows": [{"target": "NullRoute"}]})"), "pool"));
  // a ShadowRoute takes no pool_route key (only the reader writes it)
  CHECK(with_route(R"({"type": "ShadowRoute", "children": "PoolRoute|A", "pool_route": "A", "shadows": []})")
            .starts_with("m.json:6: "));

  // ConstShard: its own placement
  route_config k = route_of(R"({"type": "PoolRoute", "pool": "A", "hash": "ConstShard"})", &c);
  CHECK(pool_named(c, pool_of(k)).dist == kinds::distribution_kind::ConstShard);

  // an empty pool: mcrouter's error (or a NullRoute with error_on_empty false)
  CHECK(load_json(R"({"pools": {"E": {"servers": []}}, "route": "PoolRoute|E"})", &c) == "");
  CHECK(describe_options(written_route(c)) ==
        "error message=HashRoute with empty children, name: E result=mc_res_local_error");
  CHECK(load_json(R"({"pools": {"E": {"servers": [], "error_on_empty": false}}, "route": "PoolRoute|E"})", &c) == "");
  CHECK(std::string(kind_name(written_route(c))) == "null");
  CHECK(load_json(R"({"pools": {"E": {"servers": []}}, "route": "AllSyncRoute|Pool|E"})", &c) == "");
  CHECK(std::string(kind_name(written_route(c))) == "null");
  // HostIdRoute and LatestRoute over no child or one: a NullRoute, the child
  CHECK(load_json(R"({"pools": {"E": {"servers": []}}, "route": "LatestRoute|Pool|E"})", &c) == "");
  CHECK(std::string(kind_name(written_route(c))) == "null");
  CHECK(load_json(R"({"pools": {"E": {"servers": ["127.0.0.1:1"]}}, "route": "HostIdRoute|Pool|E"})", &c) == "");
  CHECK(std::string(kind_name(written_route(c))) == "pool");
  // LatestRoute over several: a failover over failover_count of them (all
  // three here, in an order drawn from the host's id).
  CHECK(with_route("\"LatestRoute|Pool|A\"") == "");
  CHECK(load_json(R"({"pools": {"A": {"servers": ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"]}},
                      "route": {"type": "PoolRoute", "pool": "A", "hash": {"hash_func": "Latest", "failover_count": 2}}})",
                  &c) == "");
  CHECK(std::string(kind_name(written_route(c))) == "failover");
  CHECK(written_route(c).children.size() == 2);
  CHECK(with_route("{\"type\": \"LatestRoute\", \"children\": \"Pool|A\", \"failover_count\": 0}") ==
        "m.json:6: LatestRoute: failover_count is not a positive integer");

  // a server listed twice, and pool_locality (read by no mcrouter code)
  CHECK(load_json(R"({"pools": {"D": {"servers": ["127.0.0.1:1", "127.0.0.1:1"], "pool_locality": "region"}},
                      "route": "PoolRoute|D"})",
                  &c) == "");
  CHECK(pool_named(c, "D").servers.size() == 2);

  // ErrorRoute: every error result of mcrouter's
  CHECK(describe_options(route_of(R"({"type": "ErrorRoute", "result": "mc_res_busy"})")) ==
        "error message= result=mc_res_busy");
  CHECK(describe_options(route_of(R"({"type": "ErrorRoute", "result": "mc_res_overloaded", "response": "x"})")) ==
        "error message=x result=mc_res_overloaded");

  // bucketize: the pool places ch3 buckets of the keys
  route_config b = route_of(R"({"type": "PoolRoute", "pool": "A", "bucketize": true, "total_buckets": 1000,
                                 "bucketization_keyspace": "test"})",
                            &c);
  CHECK(pool_named(c, pool_of(b)).buckets == 1000);
  CHECK(with_route(R"({"type": "PoolRoute", "pool": "A", "bucketize": true, "bucketization_keyspace": "t"})") ==
        "m.json:6: McBucketRoute: no total number of buckets");
  CHECK(with_route(R"({"type": "PoolRoute", "pool": "A", "bucketize": true, "total_buckets": 10})") ==
        "m.json:6: McBucketRoute: must have bucketization_keyspace");
  CHECK(with_route(R"({"type": "PoolRoute", "pool": "A", "bucketize": true, "total_buckets": 0,
                       "bucketization_keyspace": "t"})") ==
        "m.json:6: McBucketRoute: total_buckets is not an integer from 1 to 8388608");
  route_config nb = route_of(R"({"type": "PoolRoute", "pool": "A", "bucketize": false, "total_buckets": 10})", &c);
  CHECK(pool_named(c, pool_of(nb)).buckets == 0);

  // shard_splits: a shard_split route around the pool (around its rate limit)
  route_config sp = route_of(R"({"type": "PoolRoute", "pool": "A", "rates": {"gets_rate": 10},
                                  "shard_splits": {"1": 3, "2": 10000, "3": 1,
                                                   "4": {"old_split_size": 2, "new_split_size": 4}}})");
  CHECK(describe_options(sp) == "shard_split shard_splits=1:3,2:677,4:4(from 2)");
  CHECK(is(child(sp, "destination"), "rate_limit"));
  CHECK(with_route(R"({"type": "PoolRoute", "pool": "A", "shard_splits": {"1": 0}})") ==
        "m.json:6: ShardSplitter: split config for 1 is not a size from 1 or an object of old_split_size, "
        "new_split_size, split_start, migration_period, fanout_deletes");
  CHECK(describe_options(route_of(R"({"type": "ShardSplitRoute", "destination": "PoolRoute|A",
                                      "shard_splits": {"9": 2}, "split_shard_fanout": 4})")) ==
        "shard_split shard_splits=9:2");

  // slow_warmup: a slow_warm_up route over the pool, its failover the target
  route_config sw = route_of(R"({"type": "PoolRoute", "pool": "A", "slow_warmup": {"failoverTarget": "NullRoute",
                                  "settings": {"enable_threshold": 0.5, "disable_threshold": 0.8, "step": 2}}})");
  CHECK(describe_options(sw) == "slow_warm_up settings=0.5..0.8 start=0.1 step=2 min_requests=100");
  CHECK(pool_of(child(sw, "target")) == "A");
  CHECK(std::string(kind_name(child(sw, "failover"))) == "null");
  CHECK(with_route(R"({"type": "PoolRoute", "pool": "A", "slow_warmup": {"settings": {}}})") ==
        "m.json:6: PoolRoute: couldn't find 'failoverTarget' property in slow_warmup");
  CHECK(with_route(R"({"type": "PoolRoute", "pool": "A", "slow_warmup": {"failoverTarget": "NullRoute",
                       "settings": {"enable_threshold": 0.9, "disable_threshold": 0.7}}})") ==
        "m.json:7: SlowWarmUpSettings: 'enable_threshold' must be strictly less than 'disable_threshold'.");

  // ModifyExptimeRoute: any 32-bit exptime
  CHECK(with_route(R"({"type": "ModifyExptimeRoute", "target": "PoolRoute|A", "exptime": -1})") == "");
  CHECK(with_route(R"({"type": "ModifyExptimeRoute", "target": "PoolRoute|A", "exptime": 4294967296})") ==
        "m.json:6: ModifyExptimeRoute: exptime is not an int");
}

TEST_CASE("mcrouter's --big-value-* flags put a big_value route above the tree") {
  const char* argv[] = {"ithaca", "--big-value-split-threshold=5000", "--big-value-batch-size", "2",
                        "--big-value-hide-reply-flag"};
  cli_options o;
  std::string error;
  REQUIRE(parse_args(5, argv, o, &error));
  CHECK(*o.big_value_split_threshold == 5000);
  CHECK(*o.big_value_batch_size == 2);
  CHECK(o.big_value_hide_reply_flag);
  config c;
  REQUIRE(load_json(std::string(kPools) + "  \"route\": \"PoolRoute|A\"\n}\n", &c) == "");
  apply_overrides(o, c);
  CHECK(describe_options(written_route(c)) == "big_value threshold=5000 batch_size=2 hide_reply_flag=true");
  // Above mcrouter's root (its ProxyRoute wraps the RootRoute so), whose route is the pool.
  CHECK(pool_of(child(child(c.router.route, "target"), "route")) == "A");
  // 0 is off, as mcrouter's
  const char* off[] = {"ithaca", "--big-value-split-threshold=0"};
  cli_options o2;
  REQUIRE(parse_args(2, off, o2, &error));
  REQUIRE(load_json(std::string(kPools) + "  \"route\": \"PoolRoute|A\"\n}\n", &c) == "");
  apply_overrides(o2, c);
  CHECK(std::string(kind_name(written_route(c))) == "pool");
  const char* bad[] = {"ithaca", "--big-value-split-threshold=lots"};
  CHECK_FALSE(parse_args(2, bad, o2, &error));
  CHECK(error.find("expected a whole number") != std::string::npos);
  // the route itself, as a config type
  CHECK(describe_options(route_of(R"({"type": "BigValueRoute", "target": "PoolRoute|A", "split_threshold": 100,
                                      "batch_size": 0})")) ==
        "big_value threshold=100 batch_size=0 hide_reply_flag=false");
  CHECK(with_route(R"({"type": "BigValueRoute", "target": "PoolRoute|A", "split_threshold": 0})") ==
        "m.json:6: BigValueRoute: split_threshold is not a number of bytes above 0");
}

TEST_CASE("KeySplitRoute and McRefillRoute") {
  route_config k = route_of(R"({"type": "KeySplitRoute", "destination": "PoolRoute|A", "replicas": 3,
                                 "all_sync": true, "first_hit": false})");
  CHECK(describe_options(k) == "key_split replicas=3 all_sync=true first_hit=false");
  CHECK(pool_of(child(k, "destination")) == "A");
  CHECK(with_route(R"({"type": "KeySplitRoute", "destination": "PoolRoute|A", "replicas": 1, "all_sync": true})") ==
        "m.json:6: KeySplitRoute: replicas is not an integer from 2 to 1000");
  CHECK(with_route(R"({"type": "KeySplitRoute", "destination": "PoolRoute|A", "replicas": 2})") ==
        "m.json:6: KeySplitRoute: all_sync not specified");
  // McRefillRoute: primary is warm_up's cold, refill its warm
  route_config r = route_of(R"({"type": "McRefillRoute", "primary": "PoolRoute|A", "refill": "PoolRoute|B"})");
  CHECK(describe_options(r) == "warm_up exptime=0");
  CHECK(pool_of(child(r, "cold")) == "A");
  CHECK(pool_of(child(r, "warm")) == "B");
  CHECK(with_route(R"({"type": "McRefillRoute", "primary": "PoolRoute|A"})") ==
        "m.json:6: McRefillRoute: no refill route");
}

TEST_CASE("a config with JSONM macros is expanded, and its errors point at the file's lines") {
  const std::string head =
      "{\n"                                                                                                 // 1
      "  \"pools\": {\"A\": {\"servers\": [\"127.0.0.1:1\"]}, \"B\": {\"servers\": [\"127.0.0.1:2\"]}},\n"  // 2
      "  \"macros\": {\n"                                                                                   // 3
      "    \"failover\": {\"type\": \"macroDef\", \"params\": [\"a\", \"b\"],\n"                            // 4
      "      \"result\": {\"type\": \"FailoverRoute\",\n"                                                   // 5
      "                 \"children\": [\"PoolRoute|%a%\", \"PoolRoute|%b%\"]}}\n"                           // 6
      "  },\n";                                                                                             // 7
  config c;
  CHECK(load_json(head + "  \"route\": \"@failover(A, B)\"\n}\n", &c) == "");
  CHECK(c.router.format == "mcrouter");
  CHECK(c.router.pools.size() == 2);
  // A pool the file does not have: the reader's error, at the macro's line.
  const std::string err = load_json(head + "  \"route\": \"@failover(A, C)\"\n}\n");
  CHECK(err.starts_with("m.json:6: "));
  MESSAGE(err);
  CHECK(err.find("C") != std::string::npos);
  // The preprocessor's own errors: file:line: and the call.
  CHECK(load_json(head + "  \"route\": \"@failover(A)\"\n}\n") ==
        "m.json:8: Raw object property 'route': Macro in string 'failover' (line 8): Too few arguments for "
        "macro failover. Expected at least 2 got 1");
  // Escaped: a literal '@' reaches the reader as it is.
  CHECK(load_json(head + "  \"route\": \"\\\\@failover\"\n}\n").starts_with("m.json:8: "));
}
