// warm_up's reading of a meta `VA` reply (the TTL a warm item has left) and
// the builder's warm_up and l1l2 nodes.
#include <doctest/doctest.h>

#include "load.h"
#include "route_builder.h"
#include "route_kind_info.h"
#include "route_tree.h"
#include "routes/route_util.h"
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

// A router config with pools a and b and the route `route` (YAML), read as
// the server reads it.
config::config with_route(const std::string& route) {
  const std::string text =
      "pools:\n"
      "  a: {servers: [\"127.0.0.1:1\"]}\n"
      "  b: {servers: [\"127.0.0.1:2\"]}\n"
      "route: " +
      route + "\n";
  config::config cfg;
  std::string error;
  REQUIRE_MESSAGE(config::load_config_text(text, "t.yaml", cfg, &error), error);
  return cfg;
}

}  // namespace

TEST_CASE("the builder makes warm_up and l1l2 nodes, and refuses an l1l2 without a cap") {
  proxy::server_directory dir(1);
  std::string error;
  config::config cfg = with_route("{type: warm_up, cold: pool:a, warm: pool:b}");
  auto t = route::build_route_tree(cfg, dir, route::store_access::ReadWrite, &error);
  REQUIRE_MESSAGE(t, error);
  CHECK(std::string(t->root().kind()) == "warm_up");
  REQUIRE(t->root().children().size() == 2);
  CHECK(t->root().children()[0]->name() == "pool:a");
  CHECK(t->root().children()[1]->name() == "pool:b");

  cfg = with_route("{type: l1l2, l2: pool:a, exptime: 60s}");
  t = route::build_route_tree(cfg, dir, route::store_access::ReadWrite, &error);
  REQUIRE_MESSAGE(t, error);
  CHECK(std::string(t->root().kind()) == "l1l2");
  CHECK_FALSE(t->root_is_local());

  // The reader refuses a cap of 0; the builder does as well, for a tree made
  // another way.
  config::config zero;
  CHECK_FALSE(config::load_config_text("route: {type: l1l2, l2: local, exptime: 0}\n", "t.yaml", zero, &error));
  CHECK(error.find("exptime: an l1l2 route's cap must be above 0") != std::string::npos);
  config::route_config& root = cfg.router.route;
  root.options = root.module->make_options(config::route_format::Yaml);  // exptime 0
  error.clear();
  CHECK_FALSE(route::build_route_tree(cfg, dir, route::store_access::ReadWrite, &error));
  CHECK(error.find("exptime") != std::string::npos);
}
