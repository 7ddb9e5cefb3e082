// The store's figures behind memcached_exporter's series, counted as memcached counts
// them: total_items (items linked; an incr or decr that fits its item changes it in
// place and links none, memcached's do_add_delta), `bytes` (ITEM_ntotal summed,
// items.c do_item_link), a class that keeps being listed once it had an item (its pages
// stay in memcached) and its emulated pages.
#include <doctest/doctest.h>

#include <string>

#include "helpers.h"

using namespace ithaca::store;
using namespace ithaca::store::test;

namespace {

arith_result figures_arith(store& s, std::string_view key, arith_op op, uint64_t delta) {
  arith_result r;
  s.arithmetic(key, op, delta, at_sec(1), arith_options{}, r);
  return r;
}

}  // namespace

TEST_CASE("an incr or decr that fits its item's length makes no new item") {
  store s(small_config());
  REQUIRE(put(s, "n", "9", at_sec(1)) == store_status::Stored);
  CHECK(s.stats().total_items == 1);
  CHECK(figures_arith(s, "n", arith_op::Incr, 1).value == 10);  // "10" does not fit "9": a new item
  CHECK(s.stats().total_items == 2);
  CHECK(figures_arith(s, "n", arith_op::Incr, 1).value == 11);  // in place
  CHECK(figures_arith(s, "n", arith_op::Decr, 5).value == 6);   // "6 ": in place
  CHECK(figures_arith(s, "n", arith_op::Decr, 100).value == 0);
  CHECK(s.stats().total_items == 2);
  CHECK(s.stats().curr_items == 1);
  CHECK(fetch(s, "n", at_sec(1)) == "0 ");
}

TEST_CASE("bytes is memcached's ITEM_ntotal summed over the linked items") {
  store s(small_config());
  // "set a 0 0 5": 48 + 1 + 1 + 5 + 2 + 8 = 65, memcached's `bytes` for it.
  REQUIRE(put(s, "a", "hello", at_sec(1)) == store_status::Stored);
  CHECK(s.item_bytes() == 65);
  // Flags add their 4 bytes.
  REQUIRE(put(s, "b", "hello", at_sec(1), 0, 7) == store_status::Stored);
  CHECK(s.item_bytes() == 65 + 69);
  // The memory charge is another figure: malloc's bytes for the two blocks.
  CHECK(s.stats().bytes != s.item_bytes());
  CHECK(s.remove("a", at_sec(1)) == remove_status::Deleted);
  CHECK(s.item_bytes() == 69);
}

TEST_CASE("md x moves the emptied item's figures to its class") {
  store s(small_config());
  REQUIRE(put(s, "k", std::string(5000, 'v'), at_sec(1)) == store_status::Stored);
  remove_options o;
  o.remove_value = true;
  CHECK(s.remove("k", at_sec(1), o) == remove_status::Deleted);
  auto c = s.class_stats_now();
  CHECK(c.cls[19].number == 0);
  CHECK(c.cls[19].used_chunks == 0);
  CHECK(c.cls[1].number == 1);  // 48 + 1 + 1 + 0 + 2 + 8 = 60
  CHECK(s.item_bytes() == 60);
  CHECK(s.remove("k", at_sec(1)) == remove_status::Deleted);
  c = s.class_stats_now();
  CHECK(c.cls[1].number == 0);
  CHECK(c.cls[1].mem_requested == 0);
  CHECK(s.item_bytes() == 0);
}

TEST_CASE("a class that had an item stays seen after its items go") {
  store s(small_config());
  CHECK_FALSE(s.class_stats_now().cls[19].seen);
  REQUIRE(put(s, "k", std::string(5000, 'v'), at_sec(1)) == store_status::Stored);
  CHECK(s.remove("k", at_sec(1)) == remove_status::Deleted);
  const auto c = s.class_stats_now();
  CHECK(c.cls[19].seen);
  CHECK(c.cls[19].used_chunks == 0);
  CHECK_FALSE(c.cls[4].seen);
}

TEST_CASE("a chunked item marks its header's and chunks' classes seen") {
  store s(small_config());
  REQUIRE(put(s, "big", std::string(600000, 'v'), at_sec(1)) == store_status::Stored);
  slab_classes::chunk_list chunks;
  const size_t n = s.classes().chunks(3, 0, 600000, chunks);
  REQUIRE(n == 3);
  const auto c = s.class_stats_now();
  for (size_t i = 0; i < n; ++i) CHECK(c.cls[chunks[i].id].seen);
}

TEST_CASE("a class's emulated pages: what its chunks fill, at least one") {
  CHECK(slab_classes::emulated_pages(0, 2) == 1);
  CHECK(slab_classes::emulated_pages(1, 2) == 1);
  CHECK(slab_classes::emulated_pages(2, 2) == 1);
  CHECK(slab_classes::emulated_pages(3, 2) == 2);
  CHECK(slab_classes::emulated_pages(10922, 10922) == 1);
  CHECK(slab_classes::emulated_pages(10923, 10922) == 2);
  CHECK(slab_classes::emulated_pages(5, 0) == 0);
}

TEST_CASE("a get that does not count leaves hits and misses alone (the l1l2 route's L1)") {
  store s(small_config());
  REQUIRE(put(s, "k", "v", at_sec(1)) == store_status::Stored);
  get_options quiet;
  quiet.count = false;
  CHECK(fetch(s, "k", at_sec(1), quiet) == "v");
  CHECK(fetch(s, "nope", at_sec(1), quiet) == "<miss>");
  CHECK(s.stats().get_hits == 0);
  CHECK(s.stats().get_misses == 0);
  CHECK(s.class_stats_now().cls[1].get_hits == 0);
  CHECK(fetch(s, "k", at_sec(1)) == "v");
  CHECK(s.stats().get_hits == 1);
}
