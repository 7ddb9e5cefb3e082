// mcrouter's --pool-stats-config-file (config/pool_stats_file.h): the reader
// and its errors, and what the names mean to a pool
// (proxy/pool_group_stats.h: the longest listed name that prefixes it).
// The counters themselves are tested over the wire
// (tests/functional/test_mcrouter_pool_stats.py).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "pool_group_stats.h"
#include "pool_stats_file.h"

using ithaca::config::parse_pool_stats;
using ithaca::config::read_pool_stats_file;

TEST_CASE("pool_stats_file: the names in the file's order, with mcrouter's comments") {
  std::vector<std::string> names;
  std::string error;
  REQUIRE(parse_pool_stats("// groups\n{\"stats_enabled_pools\": [\"b.x\", \"a\",], \"other\": 1}", names, &error));
  CHECK(names == std::vector<std::string>{"b.x", "a"});
  REQUIRE(parse_pool_stats("{\"stats_enabled_pools\": []}", names, &error));
  CHECK(names.empty());
}

TEST_CASE("pool_stats_file: what is refused, and why") {
  std::vector<std::string> names;
  std::string error;
  CHECK_FALSE(parse_pool_stats("{\"stats_enabled_pools\": [\"a\"", names, &error));
  CHECK(error.find("line 1") != std::string::npos);
  CHECK_FALSE(parse_pool_stats("[\"a\"]", names, &error));
  CHECK(error == "not a JSON object");
  CHECK_FALSE(parse_pool_stats("{}", names, &error));
  CHECK(error.find("\"stats_enabled_pools\" must be an array") != std::string::npos);
  CHECK_FALSE(parse_pool_stats("{\"stats_enabled_pools\": \"a\"}", names, &error));
  CHECK(error.find("must be an array") != std::string::npos);
  CHECK_FALSE(parse_pool_stats("{\"stats_enabled_pools\": [\"a\", null]}", names, &error));
  CHECK(error.find("must be a string") != std::string::npos);
  CHECK_FALSE(parse_pool_stats("{\"stats_enabled_pools\": [\"a\", \"a\"]}", names, &error));
  CHECK(error.find("\"a\" is listed twice") != std::string::npos);
  CHECK_FALSE(read_pool_stats_file("/nonexistent/pool-stats.json", names, &error));
  CHECK(error.starts_with("/nonexistent/pool-stats.json: "));
}

TEST_CASE("pool groups: a pool counts in the longest listed name that prefixes it") {
  using namespace ithaca::proxy;
  pool_groups_install({"CI.west", "CI.west.1x", "CI"}, 2);
  CHECK(pool_groups_on());
  CHECK(pool_group_of("CI.west") == 0);
  CHECK(pool_group_of("CI.west.1") == 0);
  CHECK(pool_group_of("CI.west.1x.b") == 1);
  CHECK(pool_group_of("CI.east") == 2);
  CHECK(pool_group_of("wc") == -1);
  CHECK(pool_group_at(1, 2) != nullptr);
  CHECK(pool_group_at(0, -1) == nullptr);
  CHECK(pool_group_at(2, 0) == nullptr);  // no such worker
  pool_group_at(0, 0)->requests.add(3);
  pool_group_at(1, 0)->requests.add(4);
  pool_group_at(0, 0)->duration_us.add(100);
  pool_group_at(1, 0)->connections.fetch_add(2);
  ithaca::stats::stat_lines lines;
  pool_group_stat_lines(lines);
  REQUIRE(lines.size() == 15);
  CHECK(lines[0] == std::pair<std::string, std::string>("CI.west.requests.sum", "7"));
  CHECK(lines[1] == std::pair<std::string, std::string>("CI.west.final_result_error.sum", "0"));
  CHECK(lines[2] == std::pair<std::string, std::string>("CI.west.connections", "2"));
  // The mean over the workers with a sample: worker 1 has none.
  CHECK(lines[3] == std::pair<std::string, std::string>("CI.west.duration_us.avg", "100"));
  CHECK(lines[4] == std::pair<std::string, std::string>("CI.west.total_duration_us.avg", "0"));
  CHECK(lines[5].first == "CI.west.1x.requests.sum");
  pool_groups_install({}, 2);  // the other tests' pools count nowhere
  CHECK_FALSE(pool_groups_on());
}
