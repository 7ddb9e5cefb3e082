// ithaca's YAML route tree: every kind's spelling read into route_config,
// named routes under `routes:`, and every mistake as file:line: message.
#include <doctest/doctest.h>

#include <cstdlib>
#include <set>

#include "load.h"
#include "route_probe.h"
#include "route_kind_info.h"

using namespace ithaca::config;
namespace kinds = ithaca::kinds;

namespace {

const char* kTreePools =
    "pools:\n"
    "  main: {servers: [127.0.0.1:1]}\n"
    "  gutter: {servers: [127.0.0.1:2]}\n";  // lines 1-3

std::string tree_load(const std::string& yaml, config* out = nullptr) {
  config c;
  std::string error;
  bool ok = load_config_text(kTreePools + yaml, "t.yaml", c, &error);
  CHECK(ok == error.empty());
  if (out) *out = c;
  return error;
}

route_config tree_route_of(const std::string& yaml) {
  config c;
  const std::string error = tree_load(yaml, &c);
  INFO(error);
  REQUIRE(error.empty());
  REQUIRE(c.router.has_route);
  return c.router.route;
}

const route_config& tree_child(const route_config& r, std::string_view role, size_t i = 0) {
  auto l = r.with_role(role);
  REQUIRE(l.size() > i);
  return *l[i];
}

}  // namespace

TEST_CASE("shorthands: local, pool:NAME, a named route") {
  CHECK(is(tree_route_of("route: local\n"), "local"));
  route_config p = tree_route_of("route: pool:main\n");
  CHECK(is(p, "pool"));
  CHECK(pool_of(p) == "main");
  config c;
  REQUIRE(tree_load("routes:\n  front: pool:main\nroute: front\n", &c) == "");
  CHECK(is(c.router.route, "ref"));
  CHECK(c.router.route.name == "front");
  REQUIRE(c.router.named_routes.size() == 1);
  CHECK(c.router.named_routes[0].name == "front");
  CHECK(is(c.router.named_routes[0], "pool"));
  CHECK(c.router.named_routes[0].line == 5);
}

TEST_CASE("local, pool, ref, null and error as mappings") {
  CHECK(is(tree_route_of("route: {type: local}\n"), "local"));
  route_config p = tree_route_of("route: {type: pool, pool: main, reliable_deletes: true, name: front}\n");
  CHECK(pool_of(p) == "main");
  CHECK(describe_options(p) == "pool pool=main reliable_deletes=true");
  CHECK(p.name == "front");
  CHECK(is(tree_route_of("routes: {a: local}\nroute: {type: ref, name: a}\n"), "ref"));
  CHECK(std::string(kind_name(tree_route_of("route: {type: null}\n"))) == "null");
  CHECK(std::string(kind_name(tree_route_of("route: {type: \"null\"}\n"))) == "null");
  route_config e = tree_route_of("route: {type: error, message: \"down for maintenance\"}\n");
  CHECK(std::string(kind_name(e)) == "error");
  CHECK(describe_options(e) == "error message=down for maintenance result=mc_res_local_error");
}

TEST_CASE("prefix: prefixes and a default") {
  route_config r = tree_route_of(
      "route:\n"
      "  type: prefix\n"
      "  prefixes:\n"
      "    \"user:\": pool:main\n"
      "    \"\": {type: pool, pool: gutter}\n"
      "  default: local\n");
  CHECK(is(r, "prefix"));
  REQUIRE(r.with_role("prefix").size() == 2);
  CHECK(describe_options(r) == "prefix prefixes=user:,");  // "user:" and ""
  CHECK(pool_of(tree_child(r, "prefix", 0)) == "main");
  CHECK(tree_child(r, "prefix", 1).line == 8);
  CHECK(is(tree_child(r, "default"), "local"));
}

TEST_CASE("operation: a route per class and a default") {
  route_config r =
      tree_route_of("route: {type: operation, get: pool:main, set: pool:gutter, delete: local, default: local}\n");
  CHECK(is(r, "operation"));
  CHECK(pool_of(tree_child(r, "get")) == "main");
  CHECK(pool_of(tree_child(r, "set")) == "gutter");
  CHECK(is(tree_child(r, "delete"), "local"));
  CHECK(is(tree_child(r, "default"), "local"));
  CHECK(r.with_role("touch").empty());
  // Every class and no default is complete too.
  CHECK(tree_route_of(
            "route: {type: operation, get: local, set: local, delete: local, arithmetic: local, touch: local}\n")
            .children.size() == 5);
}

TEST_CASE("failover: children, failover_errors (all classes or per class), failover_limit") {
  route_config r = tree_route_of(
      "route: {type: failover, children: [pool:main, pool:gutter], failover_errors: [timeout, connect_error],\n"
      "        failover_limit: {rate: 0.5, burst: 100}}\n");
  CHECK(is(r, "failover"));
  REQUIRE(r.with_role("").size() == 2);
  CHECK(pool_of(tree_child(r, "", 1)) == "gutter");
  CHECK(describe_options(r) ==
        "failover failover_errors=timeout,connect_error failover_limit=0.5/100 failover_policy=in_order "
        "failover_tag=false enable_lease_pairing=false");
  route_config p = tree_route_of(
      "route: {type: failover, children: [local, local], failover_errors: {get: [tko], delete: [remote_error]},\n"
      "        failover_limit: {rate: 0.1}}\n");
  // by class; mcrouter's default burst
  CHECK(describe_options(p) ==
        "failover failover_errors=get:tko;delete:remote_error failover_limit=0.1/1000 failover_policy=in_order "
        "failover_tag=false enable_lease_pairing=false");
  CHECK(describe_options(tree_route_of("route: {type: failover, children: [local, local]}\n")) ==
        "failover failover_errors= failover_limit=0/1000 failover_policy=in_order failover_tag=false "
        "enable_lease_pairing=false");
}

TEST_CASE("failover_exptime: normal, failover children, exptime (10s by default)") {
  route_config r =
      tree_route_of("route: {type: failover_exptime, normal: pool:main, failover: [pool:gutter, local]}\n");
  CHECK(is(r, "failover_exptime"));
  CHECK(pool_of(tree_child(r, "normal")) == "main");
  REQUIRE(r.with_role("failover").size() == 2);
  CHECK(is(tree_child(r, "failover", 1), "local"));
  CHECK(describe_options(r) ==
        "failover_exptime failover_errors= failover_limit=0/1000 failover_policy=in_order failover_tag=false "
        "enable_lease_pairing=false exptime=10");
  route_config one =
      tree_route_of("route: {type: failover_exptime, normal: pool:main, failover: pool:gutter, exptime: 2m}\n");
  CHECK(one.with_role("failover").size() == 1);
  CHECK(describe_options(one).ends_with(" exptime=120"));
}

TEST_CASE("miss_failover, all_*, random: lists of children") {
  route_config m =
      tree_route_of("route: {type: miss_failover, children: [pool:main, pool:gutter], return_best_on_error: false}\n");
  CHECK(describe_options(m) == "miss_failover return_best_on_error=false");
  CHECK(describe_options(tree_route_of("route: {type: miss_failover, children: [local, local]}\n")) ==
        "miss_failover return_best_on_error=true");
  for (const char* kind : {"all_sync", "all_async", "all_initial", "all_majority", "all_fastest", "random"}) {
    route_config r =
        tree_route_of(std::string("route: {type: ") + kind + ", children: [pool:main, pool:gutter, local]}\n");
    CHECK(std::string(kind_name(r)) == kind);
    CHECK(r.with_role("").size() == 3);
  }
}

TEST_CASE("shadow: the normal route and shadows with fractions") {
  route_config r = tree_route_of(
      "route:\n"
      "  type: shadow\n"
      "  normal: pool:main\n"
      "  shadows:\n"
      "    - {route: pool:gutter, key_fraction: [0, 0.1], request_fraction: 0.5}\n"
      "    - route: local\n");
  CHECK(is(r, "shadow"));
  CHECK(pool_of(tree_child(r, "normal")) == "main");
  REQUIRE(r.with_role("shadow").size() == 2);
  const route_config& s = tree_child(r, "shadow", 0);
  CHECK(pool_of(s) == "gutter");
  CHECK(is(tree_child(r, "shadow", 1), "local"));
  CHECK(describe_options(r) == "shadow shadows=[0,0.1)x0.5,[0,1)x1");
}

TEST_CASE("warm_up, l1l2, modify_exptime") {
  route_config w = tree_route_of("route: {type: warm_up, cold: pool:main, warm: pool:gutter}\n");
  CHECK(std::string(kind_name(w)) == "warm_up");
  CHECK(pool_of(tree_child(w, "cold")) == "main");
  CHECK(pool_of(tree_child(w, "warm")) == "gutter");
  CHECK(describe_options(w) == "warm_up exptime=0");
  CHECK(describe_options(tree_route_of("route: {type: warm_up, cold: local, warm: local, exptime: 1h}\n")) ==
        "warm_up exptime=3600");
  route_config l = tree_route_of("route: {type: l1l2, l2: pool:main, exptime: 60s}\n");
  CHECK(std::string(kind_name(l)) == "l1l2");
  CHECK(pool_of(tree_child(l, "l2")) == "main");
  CHECK(describe_options(l) == "l1l2 exptime=60");
  route_config m = tree_route_of("route: {type: modify_exptime, target: pool:main, action: min, exptime: 10s}\n");
  CHECK(std::string(kind_name(m)) == "modify_exptime");
  CHECK(pool_of(tree_child(m, "target")) == "main");
  CHECK(describe_options(m) == "modify_exptime action=min exptime=10");
  CHECK(describe_options(tree_route_of("route: {type: modify_exptime, target: local, exptime: 0}\n")) ==
        "modify_exptime action=set exptime=0");
}

TEST_CASE("hash: children, hash and distribution") {
  route_config h = tree_route_of("route: {type: hash, children: [pool:main, pool:gutter]}\n");
  CHECK(is(h, "hash"));
  CHECK(describe_options(h) == "hash hash=md5 distribution=ch3 salt= weights=");
  route_config j = tree_route_of("route: {type: hash, children: [local, local], hash: crc32, distribution: jump}\n");
  CHECK(describe_options(j) == "hash hash=crc32 distribution=jump salt= weights=");
  route_config w = tree_route_of(
      "route: {type: hash, children: [pool:main, pool:gutter], distribution: weighted_ch3, weights: [1, 0.5]}\n");
  CHECK(describe_options(w) == "hash hash=md5 distribution=weighted_ch3 salt= weights=1,0.5");
}

TEST_CASE("rate_limit: target, fallback, rates and bursts by class") {
  route_config r = tree_route_of(
      "route: {type: rate_limit, target: pool:main, fallback: {type: error, message: slow down},\n"
      "        rates: {get: 1000, set: 50.5}, burst: {get: 5000}}\n");
  CHECK(is(r, "rate_limit"));
  CHECK(pool_of(tree_child(r, "target")) == "main");
  CHECK(std::string(kind_name(tree_child(r, "fallback"))) == "error");
  // set's burst defaults to its rate; delete, arithmetic and touch are unlimited
  CHECK(describe_options(r) == "rate_limit rates=get:1000,set:50.5 burst=get:5000,set:50.5");
}

TEST_CASE("named routes nest and are used from anywhere in the tree") {
  config c;
  REQUIRE(tree_load("routes:\n"
                    "  users: {type: failover, children: [pool:main, pool:gutter]}\n"
                    "  both: {type: all_sync, children: [users, pool:main]}\n"
                    "route: {type: prefix, prefixes: {\"u:\": users}, default: both}\n",
                    &c) == "");
  CHECK(c.router.named_routes.size() == 2);
  CHECK(is(tree_child(c.router.route, "prefix"), "ref"));
  CHECK(tree_child(c.router.route, "prefix").name == "users");
}

// Each mistake, reported at its line (the pools take lines 1-3).
TEST_CASE("route tree mistakes point at their line") {
  CHECK(tree_load("route:\n  type: failovr\n") == "t.yaml:5: unknown route type 'failovr' (did you mean 'failover'?)");
  CHECK(tree_load("route:\n  type: FailoverRoute\n") ==
        "t.yaml:5: unknown route type 'FailoverRoute' (mcrouter's FailoverRoute is `type: failover` here)");
  CHECK(tree_load("route:\n  type: sideways\n")
            .starts_with("t.yaml:5: unknown route type 'sideways' (types: local, pool,"));
  CHECK(tree_load("route:\n  pool: main\n").starts_with("t.yaml:5: a route needs `type:` (local, pool, ref, prefix,"));
  // A missing child, a child of another kind, a typo.
  CHECK(tree_load("route:\n  type: warm_up\n  cold: local\n") == "t.yaml:5: a warm_up route needs `warm:` (a route)");
  CHECK(tree_load("route:\n  type: warm_up\n  cold: local\n  warm: local\n  children: [local]\n") ==
        "t.yaml:8: a warm_up route takes no `children:` (it takes `cold:`, `warm:` and `exptime:`)");
  CHECK(tree_load("route:\n  type: local\n  children: [local]\n") ==
        "t.yaml:6: a local route takes no `children:` (it takes nothing but `type:` and `name:`)");
  CHECK(tree_load("route:\n  type: failover\n  childern: [local, local]\n") ==
        "t.yaml:6: unknown key 'childern' in a failover route (did you mean 'children'?)");
  CHECK(tree_load("route:\n  type: failover\n  children: [local]\n") ==
        "t.yaml:6: children: a failover route needs at least two routes, got 1");
  CHECK(tree_load("route:\n  type: all_sync\n  children: []\n") ==
        "t.yaml:6: children: an all_sync route needs at least one route, got 0");
  CHECK(tree_load("route:\n  type: all_sync\n  children: local\n") ==
        "t.yaml:6: children: expected a list of routes, got 'local'");
  CHECK(tree_load("route:\n  type: shadow\n  shadows: [{route: local}]\n") ==
        "t.yaml:5: a shadow route needs `normal:` (a route)");
  CHECK(tree_load("route:\n  type: operation\n  get: local\n") ==
        "t.yaml:5: an operation route needs `default:` or a route for every class (get, set, delete, arithmetic, "
        "touch); none for `set:`, `delete:`, `arithmetic:` and `touch:`");
  CHECK(tree_load("route:\n  type: prefix\n").starts_with("t.yaml:5: a prefix route needs `prefixes:`"));
  CHECK(tree_load("route:\n  type: l1l2\n  l2: local\n").starts_with("t.yaml:5: an l1l2 route needs `exptime:`"));
  CHECK(tree_load("route:\n  type: l1l2\n  l2: local\n  exptime: 0\n")
            .starts_with("t.yaml:7: exptime: an l1l2 route's cap must be above 0"));
  CHECK(tree_load("route:\n  type: modify_exptime\n  target: local\n") ==
        "t.yaml:5: a modify_exptime route needs `exptime:` (what to set, or the cap with action: min)");
  CHECK(tree_load("route:\n  type: pool\n") ==
        "t.yaml:5: a pool route needs `pool:` (the name of a pool under `pools:`)");
  CHECK(tree_load("route: \"pool:\"\n") == "t.yaml:4: \"pool:\" needs a pool's name after it (\"pool:main\")");
  CHECK(tree_load("route: [local]\n").starts_with("t.yaml:4: a route is a mapping with `type:`"));
}

TEST_CASE("a pool or a named route that does not exist; a cycle") {
  CHECK(tree_load("route:\n  type: pool\n  pool: q\n") ==
        "t.yaml:5: route names pool 'q', which is not under `pools:` (pools: main, gutter)");
  CHECK(tree_load("route: {type: failover, children: [pool:main,\n  pool:gutr]}\n") ==
        "t.yaml:5: route names pool 'gutr', which is not under `pools:` (pools: main, gutter)");
  CHECK(tree_load("routes:\n  users: local\nroute:\n  type: all_sync\n  children: [local,\n    usres]\n") ==
        "t.yaml:9: route refers to 'usres', which is not under `routes:` (did you mean 'users'?)");
  CHECK(tree_load("route: nowhere\n") ==
        "t.yaml:4: route refers to 'nowhere', which is not under `routes:` (there are none)");
  CHECK(tree_load("routes:\n"
                  "  a: {type: failover, children: [pool:main, b]}\n"
                  "  b: {type: all_sync, children: [c]}\n"
                  "  c: {type: random, children: [a]}\n"
                  "route: a\n") == "t.yaml:7: named routes refer to each other in a cycle: a -> b -> c -> a");
  CHECK(tree_load("routes:\n  a: {type: all_sync, children: [a]}\nroute: local\n") ==
        "t.yaml:5: named routes refer to each other in a cycle: a -> a");
  CHECK(tree_load("routes:\n  a: local\n  b: a\nroute: local\n") ==
        "t.yaml:6: routes: 'b' is only another name for 'a'; use 'a' where 'b' is used");
  CHECK(tree_load("routes:\n  local: pool:main\n").starts_with("t.yaml:5: routes: 'local' cannot name a route"));
}

TEST_CASE("bad fractions, rates, exptimes and error names") {
  CHECK(tree_load("route: {type: shadow, normal: local, shadows: [{route: local, key_fraction: [0.5, 0.1]}]}\n")
            .starts_with("t.yaml:4: key_fraction: expected [A, B] with 0 <= A <= B <= 1"));
  CHECK(tree_load("route: {type: shadow, normal: local, shadows: [{route: local, request_fraction: 1.5}]}\n") ==
        "t.yaml:4: request_fraction: expected a fraction from 0 to 1, got '1.5'");
  CHECK(tree_load("route: {type: shadow, normal: local, shadows: [{route: local, requests_fraction: 1}]}\n") ==
        "t.yaml:4: unknown key 'requests_fraction' in section 'shadows' (did you mean 'request_fraction'?)");
  CHECK(tree_load("route: {type: rate_limit, target: local, rates: {get: -1}}\n") ==
        "t.yaml:4: get: expected requests per second above 0, got '-1'");
  CHECK(tree_load("route: {type: rate_limit, target: local, rates: {gets: 1}}\n") ==
        "t.yaml:4: unknown key 'gets' in section 'rates' (did you mean 'get'?)");
  CHECK(tree_load("route: {type: rate_limit, target: local, rates: {get: 1}, burst: {set: 5}}\n") ==
        "t.yaml:4: burst: set has a burst but no rate under `rates:`");
  CHECK(tree_load("route: {type: rate_limit, target: local}\n")
            .starts_with("t.yaml:4: a rate_limit route needs `rates:`"));
  CHECK(tree_load("route: {type: warm_up, cold: local, warm: local, exptime: 10}\n") ==
        "t.yaml:4: exptime: expected a duration in whole seconds (10s, 5m, 1h, or 0) up to 30 days, got '10' "
        "(a unit is required: 10s?)");
  CHECK(tree_load("route: {type: warm_up, cold: local, warm: local, exptime: 1500ms}\n")
            .starts_with("t.yaml:4: exptime: expected a duration in whole seconds"));
  CHECK(tree_load("route: {type: warm_up, cold: local, warm: local, exptime: 31d}\n")
            .starts_with("t.yaml:4: exptime: expected a duration in whole seconds"));
  CHECK(tree_load("route: {type: failover, children: [local, local], failover_errors: [timout]}\n") ==
        "t.yaml:4: failover_errors: unknown error 'timout' (did you mean 'timeout'?)");
  CHECK(tree_load("route: {type: failover, children: [local, local], failover_limit: {rate: 2}}\n") ==
        "t.yaml:4: rate: expected a fraction of requests above 0, at most 1, got '2'");
  CHECK(tree_load("route: {type: failover, children: [local, local], failover_limit: {burst: 2}}\n")
            .starts_with("t.yaml:4: failover_limit needs `rate:`"));
  CHECK(tree_load("route: {type: modify_exptime, target: local, exptime: 5s, action: max}\n") ==
        "t.yaml:4: action: expected one of set or min, got 'max'");
  CHECK(tree_load("route: {type: hash, children: [local], distribution: ketama}\n") ==
        "t.yaml:4: distribution: expected one of ch3, mcrouter_crc32, weighted_ch3, const_shard, modula or jump, got 'ketama'");
  CHECK(tree_load("route: {type: hash, children: [local, local], distribution: weighted_ch3}\n") ==
        "t.yaml:4: distribution weighted_ch3 needs `weights` (each child's share, from 0 to 1)");
  CHECK(tree_load("route: {type: hash, children: [local, local], distribution: weighted_ch3, weights: [2]}\n") ==
        "t.yaml:4: weights: each is a number from 0 to 1");
  CHECK(tree_load("route: {type: error, message: \"a\\r\\nb\"}\n") == "t.yaml:4: message: one line, without CR or LF");
}

TEST_CASE("the first mistake in the file is the one reported") {
  // The named routes are read before `route:`, whatever their place.
  // Every kind in the registry's (README's) order, `ref` after pool: one
  // per line, so a new kind is a one-line change here too.
  const char* const every_kind[] = {
      // clang-format off
      "local",
      "pool",
      "ref",
      "prefix",
      "routing_prefix",
      "operation",
      "routing_group",
      "failover",
      "failover_exptime",
      "salted_failover",
      "miss_failover",
      "all_sync",
      "all_async",
      "all_initial",
      "all_majority",
      "all_fastest",
      "shadow",
      "warm_up",
      "l1l2",
      "l1l2_cache",
      "hash",
      "random",
      "load_balancer",
      "modify_exptime",
      "rate_limit",
      "shard_split",
      "slow_warm_up",
      "big_value",
      "key_split",
      "error",
      "null",
      "dev_null",
      "only_gets",
      "latency_injection",
      "l1l2_size_split",
      "migrate",
      "modify_key",
      "host_id",
      "logging",
      "carbon_lookaside",
      // clang-format on
  };
  std::string listed;
  for (const char* k : every_kind) listed += (listed.empty() ? "" : ", ") + std::string(k);
  CHECK(tree_load("route:\n  type: all_sync\n  children: [{type: bogus}]\nroutes:\n  a: {type: nope}\n") ==
        "t.yaml:6: unknown route type 'bogus' (types: " + listed + ")");
  // A mistake in the tree hides the cross-checks (a pool, a ref), whose
  // messages would be about a half-read tree.
  CHECK(tree_load("route:\n  type: all_sync\n  children:\n    - pool:nope\n    - {type: bogus}\n")
            .starts_with("t.yaml:8: unknown route type 'bogus'"));
}

namespace {

void kinds_in(const route_config& r, std::set<std::string>& out) {
  out.insert(kind_name(r));
  for (const route_config& c : r.children) kinds_in(c, out);
}

}  // namespace

TEST_CASE("the sample config/routes.yaml parses and uses every kind") {
  const char* path = std::getenv("ITHACA_SAMPLE_ROUTES_CONFIG");
  INFO("run through meson test (sets ITHACA_SAMPLE_ROUTES_CONFIG)");
  REQUIRE(path != nullptr);
  config c;
  std::string error;
  REQUIRE_MESSAGE(load_config(path, c, &error), error);
  std::set<std::string> kinds;
  kinds_in(c.router.route, kinds);
  for (const route_config& r : c.router.named_routes) kinds_in(r, kinds);
  std::vector<std::string> every = {
      "local", "pool", "ref", "prefix", "operation", "failover", "failover_exptime", "shadow", "hash", "rate_limit"};
  REQUIRE(route_kinds().size() >= 12);  // the modules' kinds (route/route_kinds.cc)
  for (const route_kind_info* k : route_kinds()) every.emplace_back(k->name);
  for (const std::string& k : every) {
    CHECK_MESSAGE(kinds.count(k) == 1, "config/routes.yaml has no ", k, " route");
  }
}
