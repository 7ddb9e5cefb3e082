// warm_up's reading of a meta `VA` reply (the TTL a warm item has left) and
// the builder's warm_up and l1l2 nodes.
#include <doctest/doctest.h>

#include "route_builder.h"
#include "route_tree.h"
#include "routes/warm_up_route.h"
#include "server_directory.h"

using namespace ithaca;
using ithaca::route::parse_meta_value;

TEST_CASE("parse_meta_value reads the value, flags and TTL of a VA reply") {
  std::string_view value;
  std::uint32_t flags = 9;
  std::int64_t ttl = 0;
  REQUIRE(parse_meta_value("VA 5 t59 f7\r\nhello\r\n", value, flags, ttl));
  CHECK(value == "hello");
  CHECK(flags == 7);
  CHECK(ttl == 59);
  REQUIRE(parse_meta_value("VA 2 f0 t-1\r\nab\r\n", value, flags, ttl));
  CHECK(value == "ab");
  CHECK(flags == 0);
  CHECK(ttl == -1);
  REQUIRE(parse_meta_value("VA 0 t3\r\n\r\n", value, flags, ttl));
  CHECK(value.empty());
  CHECK(ttl == 3);
  CHECK_FALSE(parse_meta_value("EN\r\n", value, flags, ttl));
  CHECK_FALSE(parse_meta_value("SERVER_ERROR out of memory\r\n", value, flags, ttl));
  CHECK_FALSE(parse_meta_value("VA 9 t1\r\nshort\r\n", value, flags, ttl));  // truncated
  CHECK_FALSE(parse_meta_value("VA x t1\r\nab\r\n", value, flags, ttl));
  CHECK_FALSE(parse_meta_value("VA 2 tx\r\nab\r\n", value, flags, ttl));
  CHECK_FALSE(parse_meta_value("VA 2 t1", value, flags, ttl));  // no line end
}

namespace {

config::config with_pools() {
  config::config cfg;
  for (const char* name : {"a", "b"}) {
    config::pool_config p;
    p.name = name;
    config::backend_server s;
    s.address = std::string("127.0.0.1:") + (name[0] == 'a' ? "1" : "2");
    p.servers.push_back(s);
    cfg.router.pools.push_back(p);
  }
  cfg.router.has_route = true;
  return cfg;
}

config::route_config pool_child(const char* pool, const char* role) {
  config::route_config c;
  c.kind = config::route_kind::Pool;
  c.pool = pool;
  c.role = role;
  return c;
}

}  // namespace

TEST_CASE("the builder makes warm_up and l1l2 nodes, and refuses an l1l2 without a cap") {
  proxy::server_directory dir(1);
  std::string error;
  config::config cfg = with_pools();
  cfg.router.route.kind = config::route_kind::WarmUp;
  cfg.router.route.children.push_back(pool_child("a", "cold"));
  cfg.router.route.children.push_back(pool_child("b", "warm"));
  auto t = route::build_route_tree(cfg, dir, route::store_access::ReadWrite, &error);
  REQUIRE_MESSAGE(t, error);
  CHECK(std::string(t->root().kind()) == "warm_up");
  REQUIRE(t->root().children().size() == 2);
  CHECK(t->root().children()[0]->name() == "pool:a");
  CHECK(t->root().children()[1]->name() == "pool:b");

  cfg = with_pools();
  cfg.router.route.kind = config::route_kind::L1L2;
  cfg.router.route.children.push_back(pool_child("a", "l2"));
  cfg.router.route.exptime = 60;
  t = route::build_route_tree(cfg, dir, route::store_access::ReadWrite, &error);
  REQUIRE_MESSAGE(t, error);
  CHECK(std::string(t->root().kind()) == "l1l2");
  CHECK_FALSE(t->root_is_local());

  cfg.router.route.exptime = 0;
  error.clear();
  CHECK_FALSE(route::build_route_tree(cfg, dir, route::store_access::ReadWrite, &error));
  CHECK(error.find("exptime") != std::string::npos);
}
