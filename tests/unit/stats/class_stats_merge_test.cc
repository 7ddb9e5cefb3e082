// `stats items` / `stats slabs` of several servers as one (flow/class_stats_merge.h).
#include <doctest/doctest.h>

#include "class_stats_merge.h"

using ithaca::stats::merge_class_stats;
using ithaca::stats::stat_lines;

TEST_CASE("one server's answer comes back as it was") {
  const stat_lines slabs = {{"1:chunk_size", "96"}, {"1:total_pages", "1"}, {"5:chunk_size", "240"},
                            {"5:total_pages", "2"}, {"active_slabs", "2"},  {"total_malloced", "3145728"}};
  CHECK(merge_class_stats({slabs}) == slabs);
  const stat_lines items = {
      {"items:1:number", "3"}, {"items:1:age", "7"}, {"items:1:evicted", "0"}, {"items:1:evicted_time", "4"}};
  CHECK(merge_class_stats({items}) == items);
}

TEST_CASE("two servers: figures summed, the class's shape and oldest age kept, classes in order") {
  const stat_lines a = {{"5:chunk_size", "240"},
                        {"5:chunks_per_page", "4369"},
                        {"5:used_chunks", "3"},
                        {"active_slabs", "1"},
                        {"total_malloced", "1048576"}};
  const stat_lines b = {{"1:chunk_size", "96"},        {"1:used_chunks", "2"}, {"5:chunk_size", "240"},
                        {"5:chunks_per_page", "4369"}, {"5:used_chunks", "4"}, {"active_slabs", "2"},
                        {"total_malloced", "2097152"}};
  CHECK(merge_class_stats({a, b}) == stat_lines{{"1:chunk_size", "96"},
                                                {"1:used_chunks", "2"},
                                                {"5:chunk_size", "240"},
                                                {"5:chunks_per_page", "4369"},
                                                {"5:used_chunks", "7"},
                                                {"active_slabs", "2"},
                                                {"total_malloced", "3145728"}});
}

TEST_CASE("items: ages are the oldest, evicted_time the most recent eviction's") {
  const stat_lines a = {
      {"items:3:number", "1"}, {"items:3:age", "50"}, {"items:3:evicted", "0"}, {"items:3:evicted_time", "0"}};
  const stat_lines b = {
      {"items:3:number", "2"}, {"items:3:age", "20"}, {"items:3:evicted", "4"}, {"items:3:evicted_time", "9"}};
  const stat_lines c = {
      {"items:3:number", "1"}, {"items:3:age", "10"}, {"items:3:evicted", "1"}, {"items:3:evicted_time", "30"}};
  CHECK(merge_class_stats({a, b, c}) ==
        stat_lines{
            {"items:3:number", "4"}, {"items:3:age", "50"}, {"items:3:evicted", "5"}, {"items:3:evicted_time", "9"}});
}

TEST_CASE("nothing to merge, and a value that is not a number") {
  CHECK(merge_class_stats({}).empty());
  CHECK(merge_class_stats({{{"1:note", "x y"}}, {{"1:note", "z"}}}) == stat_lines{{"1:note", "x y"}});
}
