// slab_stats.h and repl_stats.h: the `stats slabs`, `stats items` and
// replication lines, in memcached's (and yrmcds's) names, since a reset's
// baseline.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "repl_counters.h"
#include "repl_stats.h"
#include "slab_stats.h"

namespace ithaca::server {

namespace {

std::map<std::string, std::string> as_map(const stats::stat_lines& lines) {
  std::map<std::string, std::string> m;
  for (const auto& [k, v] : lines) CHECK(m.emplace(k, v).second);  // no name twice
  return m;
}

}  // namespace

TEST_CASE("stats slabs lists each class that ever held an item, in memcached's emulated pages") {
  const store::slab_classes classes;
  store::class_stats_snapshot now{}, base{};
  const unsigned small = 1, big = 5;
  const uint64_t per_page = classes.per_page(small);
  REQUIRE(per_page > 1);
  now.cls[small].seen = true;
  now.cls[small].used_chunks = per_page + 1;  // a second page begun
  now.cls[small].get_hits = 30;
  base.cls[small].get_hits = 12;
  now.cls[small].cas_badval = 4;
  base.cls[small].cas_badval = 9;  // a baseline above the counter: never negative
  now.cls[big].seen = true;        // its items are gone: still listed, one page
  now.cls[3].used_chunks = 7;      // never seen: not listed
  stats::stat_lines lines;
  slab_stat_lines(classes, now, base, 123456, lines);
  const auto m = as_map(lines);
  CHECK(m.at("1:chunk_size") == std::to_string(classes.chunk_size(small)));
  CHECK(m.at("1:chunks_per_page") == std::to_string(per_page));
  CHECK(m.at("1:total_pages") == "2");
  CHECK(m.at("1:total_chunks") == std::to_string(2 * per_page));
  CHECK(m.at("1:used_chunks") == std::to_string(per_page + 1));
  CHECK(m.at("1:free_chunks") == std::to_string(per_page - 1));
  CHECK(m.at("1:free_chunks_end") == "0");
  CHECK(m.at("1:get_hits") == "18");
  CHECK(m.at("1:cas_badval") == "0");
  CHECK(m.at("5:total_pages") == "1");
  CHECK(m.at("5:used_chunks") == "0");
  CHECK(m.count("3:chunk_size") == 0);
  CHECK(m.at("active_slabs") == "2");
  CHECK(m.at("total_malloced") == "123456");
  // memcached's order: per class, then the two totals last.
  REQUIRE(lines.size() == 2 * 15 + 2);
  CHECK(lines[0].first == "1:chunk_size");
  CHECK(lines[15].first == "5:chunk_size");
  CHECK(lines[30].first == "active_slabs");
}

TEST_CASE("stats items lists each class with items, every item cold, events since the baseline") {
  store::class_stats_snapshot now{}, base{};
  now.cls[2].number = 10;
  now.cls[2].mem_requested = 999;
  now.cls[2].oldest_atime = 100;
  now.cls[2].get_hits = 50;
  base.cls[2].get_hits = 20;
  now.cls[2].evicted = 3;
  base.cls[2].evicted = 3;  // none since the reset
  now.cls[2].evicted_time = 42;
  now.cls[7].number = 1;
  now.cls[7].evicted = 2;
  now.cls[7].evicted_time = 9;
  now.cls[7].crawler_reclaimed = 6;
  now.cls[4].get_hits = 5;  // no items now: not listed
  stats::stat_lines lines;
  item_stat_lines(now, base, 160, lines);
  const auto m = as_map(lines);
  CHECK(m.at("items:2:number") == "10");
  CHECK(m.at("items:2:number_cold") == "10");
  CHECK(m.at("items:2:number_hot") == "0");
  CHECK(m.at("items:2:age") == "60");
  CHECK(m.at("items:2:mem_requested") == "999");
  CHECK(m.at("items:2:hits_to_cold") == "30");
  CHECK(m.at("items:2:evicted") == "0");
  CHECK(m.at("items:2:evicted_time") == "0");  // no eviction since the reset
  CHECK(m.at("items:7:evicted") == "2");
  CHECK(m.at("items:7:evicted_time") == "9");
  CHECK(m.at("items:7:age") == "0");  // no access seen by a complete pass yet
  CHECK(m.at("items:7:crawler_reclaimed") == "6");
  CHECK(m.count("items:4:number") == 0);
  CHECK(lines.front().first == "items:2:number");
  CHECK(lines.size() == 2 * 28);
}

TEST_CASE("the replication lines give the counters, the role and the ack latency average") {
  replication::repl_counters c;
  c.role = "master";
  c.slaves = 2;
  c.records_sent = 77;
  c.applied_sets = 5;
  c.applied_touches = 6;
  c.applied_deletes = 7;
  stats::stat_lines lines;
  repl_stat_lines(c, lines);
  auto m = as_map(lines);
  CHECK(lines.front() == std::pair<std::string, std::string>{"repl_role", "master"});
  CHECK(m.at("repl_slaves") == "2");
  CHECK(m.at("repl_records_sent") == "77");
  // yrmcds's names for what a slave applied.
  CHECK(m.at("repl_updated") == "5");
  CHECK(m.at("repl_touched") == "6");
  CHECK(m.at("repl_removed") == "7");
  CHECK(m.at("repl_ack_latency_avg_us") == "0");  // none confirmed: no division by zero
  c.ack_confirmed = 4;
  c.ack_latency_us = 1000;
  c.ack_latency_max_us = 700;
  lines.clear();
  repl_stat_lines(c, lines);
  m = as_map(lines);
  CHECK(m.at("repl_ack_latency_avg_us") == "250");
  CHECK(m.at("repl_ack_latency_max_us") == "700");
}

}  // namespace ithaca::server
