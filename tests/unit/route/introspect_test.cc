// Introspection keys (introspect.h): which gets the request loop answers
// itself, and what route/route_handles say over a tree built from a config.
#include <doctest/doctest.h>

#include "handle_walk.h"
#include "introspect.h"
#include "route_builder.h"
#include "route_kind_info.h"
#include "route_tree.h"
#include "routes/pool_route.h"
#include "server_directory.h"

using namespace ithaca;
using ithaca::route::introspection_answer;
using ithaca::route::is_introspection;

namespace {

struct no_stats final : stats::stats_provider {
  bool collect(std::string_view, stats::stat_lines&) override { return false; }
  void reset() override {}
  void set_verbosity(uint32_t) override {}
  bool set_memory_limit(uint64_t) override { return true; }
};

protocol::request get_of(protocol::command cmd, std::initializer_list<std::string_view> keys) {
  protocol::request r;
  r.cmd = cmd;
  for (std::string_view k : keys) r.keys.push_back(k);
  return r;
}

config::route_config pool_route_config(const std::string& pool) {
  return config::module_node("pool", config::route_format::Yaml, 0, {{"pool", pool}});
}

config::pool_config pool_of(const std::string& name, std::initializer_list<const char*> addresses) {
  config::pool_config p;
  p.name = name;
  for (const char* a : addresses) {
    config::backend_server s;
    s.address = a;
    p.servers.push_back(s);
  }
  return p;
}

}  // namespace

TEST_CASE("only gets whose every key is an introspection key are answered locally") {
  using protocol::command;
  CHECK(is_introspection(get_of(command::Get, {"__mcrouter__.version"})));
  CHECK(is_introspection(get_of(command::Gets, {"__ithaca__.route(get,k)"})));
  CHECK(is_introspection(get_of(command::MetaGet, {"__mcrouter__.x"})));
  CHECK(is_introspection(get_of(command::Get, {"__mcrouter__.a", "__ithaca__.b"})));
  CHECK_FALSE(is_introspection(get_of(command::Get, {"__mcrouter__.a", "plain"})));
  CHECK_FALSE(is_introspection(get_of(command::Get, {"plain", "__mcrouter__.a"})));
  CHECK_FALSE(is_introspection(get_of(command::Get, {"__mcrouter_.version"})));
  CHECK_FALSE(is_introspection(get_of(command::Get, {"__"})));
  CHECK_FALSE(is_introspection(get_of(command::Set, {"__mcrouter__.version"})));
  CHECK_FALSE(is_introspection(get_of(command::Gat, {"__mcrouter__.version"})));
  CHECK_FALSE(is_introspection(get_of(command::Delete, {"__mcrouter__.version"})));
  CHECK_FALSE(is_introspection(get_of(command::Get, {})));
}

TEST_CASE("route and route_handles walk the failover's children and name the pool's server") {
  config::config cfg;
  cfg.router.pools.push_back(pool_of("p", {"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}));
  cfg.router.pools.push_back(pool_of("q", {"127.0.0.1:4"}));
  cfg.router.has_route = true;
  cfg.router.route = config::module_node("failover", config::route_format::Yaml, 0);
  cfg.router.route.name = "fo";
  cfg.router.route.children.push_back(pool_route_config("p"));
  cfg.router.route.children.push_back(pool_route_config("q"));
  proxy::server_directory dir(1);
  std::string error;
  auto tree = route::build_route_tree(cfg, dir, route::store_access::ReadWrite, &error);
  REQUIRE_MESSAGE(tree, error);
  no_stats stats;
  stats::command_counters counters;
  commands::server_context ctx{stats, counters};
  const route::route& root = tree->root();
  const proxy::pool& p = *tree->pools()[0];
  for (std::string_view key : {"a", "b", "c", "user:17"}) {
    const std::string where = p.servers()[p.locate(key)]->address();
    const std::string k(key);
    CHECK(introspection_answer("__mcrouter__.route(get," + k + ")", root, tree.get(), ctx, nullptr) == where);
    const std::string handles =
        introspection_answer("__mcrouter__.route_handles(set," + k + ")", root, tree.get(), ctx, nullptr);
    // mcrouter's form: its root, the failover, the pool's hash selection
    // over three servers, the server's DestinationRoute line.
    CHECK(handles.starts_with("root\n failover:fo\n  selection|hash|ketama\n   host|pool=p|id=" +
                              std::to_string(p.locate(key)) + "|ap=" + where + ":"));
    CHECK(
        handles.ends_with("\n  host|pool=q|id=0|ap=127.0.0.1:4:auto:plain:notcompressed|timeout=1000ms|"
                          "keep_routing_prefix=false|msb=0"));
  }
  // flush_all reaches every server of the first pool (its servers are up).
  CHECK(introspection_answer("__ithaca__.route(flushall,x)", root, tree.get(), ctx, nullptr) ==
        "127.0.0.1:1\r\n127.0.0.1:2\r\n127.0.0.1:3");
  CHECK(introspection_answer("__mcrouter__.route(bogus,x)", root, tree.get(), ctx, nullptr) ==
        "ERROR: route: unknown request bogus");
  CHECK(introspection_answer("__mcrouter__.config_file", root, tree.get(), ctx, nullptr) ==
        "ERROR: no config file found!");
  ctx.config_file = "/etc/ithaca.yaml";
  CHECK(introspection_answer("__mcrouter__.config_file", root, tree.get(), ctx, nullptr) == "/etc/ithaca.yaml");
  CHECK(introspection_answer("__mcrouter__.route(get", root, tree.get(), ctx, nullptr) ==
        "ERROR: unknown command: route(get");
  CHECK(introspection_answer("__mcrouter__.pools", root, tree.get(), ctx, nullptr)
            .starts_with(
                "{\n  \"p\": [\n    \"host|pool=p|id=0|ap=127.0.0.1:1:auto:plain:notcompressed|timeout=1000ms|"));
  CHECK(introspection_answer("__mcrouter__.failure_domains(q)", root, tree.get(), ctx, nullptr) ==
        "{\n  \"127.0.0.1:4\": \"0()\"\n}");
  CHECK(introspection_answer("__mcrouter__.failure_domains", root, tree.get(), ctx, nullptr) ==
        "ERROR: failure_domains: 1 arg expected");
  CHECK(introspection_answer("__mcrouter__.config_md5_digest", root, tree.get(), ctx, nullptr) ==
        "ERROR: no config md5 digest found!");
}

TEST_CASE("mcrouter's handle names come from the kinds' mcrouter types") {
  using route::mcrouter_handle_name;
  CHECK(mcrouter_handle_name("AllSyncRoute") == "all-sync");
  CHECK(mcrouter_handle_name("L1L2CacheRoute") == "l1l2-cache");
  CHECK(mcrouter_handle_name("WarmUpRoute") == "warm-up");
  CHECK(mcrouter_handle_name("MissFailoverRoute") == "miss-failover");
  CHECK(mcrouter_handle_name("OperationSelectorRoute") == "operation-selector");
  CHECK(mcrouter_handle_name("NullRoute") == "null");
}
