// The store's per-class figures (class_stats.h): counted where items are linked,
// unlinked, evicted, reclaimed and read, in the class memcached would use.
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "helpers.h"

using namespace ithaca::store;
using namespace ithaca::store::test;

namespace {

void full_sweep(store& s, const store_now& now) {
  gc_stats g;
  uint64_t next = 0;
  do {
    next = s.gc_sweep(next, 64, now, g);
  } while (next != 0);
}

// Keys "kNN" (3 bytes) so every item of a value size lands in one class.
std::string key3(int i) {
  std::string k = "k";
  if (i < 10) k += '0';
  k += std::to_string(i);
  return k;
}

}  // namespace

TEST_CASE("items are counted in memcached's class, and counted out when deleted") {
  store s(small_config());
  auto now = at_sec(1);
  for (int i = 0; i < 50; ++i) REQUIRE(put(s, key3(i), std::string(100, 'a'), now) == store_status::Stored);
  for (int i = 50; i < 70; ++i) REQUIRE(put(s, key3(i), std::string(5000, 'b'), now) == store_status::Stored);
  auto c = s.class_stats_now();
  CHECK(c.cls[4].number == 50);  // 162 bytes: the 192-byte class
  CHECK(c.cls[4].used_chunks == 50);
  CHECK(c.cls[4].mem_requested == 50 * 162);
  CHECK(c.cls[4].cmd_set == 50);
  CHECK(c.cls[19].number == 20);  // 5062 bytes: 5680
  CHECK(c.cls[19].mem_requested == 20 * 5062);
  uint64_t others = 0;
  for (unsigned i = 0; i < kSlabClassMax; ++i) {
    if (i != 4 && i != 19) others += c.cls[i].number + c.cls[i].used_chunks;
  }
  CHECK(others == 0);

  // Replacing with a bigger value moves the item to its new class.
  REQUIRE(put(s, key3(0), std::string(5000, 'c'), now) == store_status::Stored);
  c = s.class_stats_now();
  CHECK(c.cls[4].number == 49);
  CHECK(c.cls[19].number == 21);

  for (int i = 0; i < 70; ++i) CHECK(s.remove(key3(i), now) == remove_status::Deleted);
  c = s.class_stats_now();
  CHECK(c.cls[4].number == 0);
  CHECK(c.cls[4].mem_requested == 0);
  CHECK(c.cls[4].used_chunks == 0);
  CHECK(c.cls[19].number == 0);
  CHECK(c.cls[4].delete_hits == 49);
  CHECK(c.cls[19].delete_hits == 21);
}

TEST_CASE("non-zero flags add memcached's 4-byte suffix") {
  store s(small_config());
  auto now = at_sec(1);
  // 48 + 4 + 92 + 8 = 152 fits class 3 with flags 0; with flags it is 156: class 4.
  REQUIRE(put(s, "k00", std::string(90, 'a'), now, 0, 0) == store_status::Stored);
  REQUIRE(put(s, "k01", std::string(90, 'a'), now, 0, 5) == store_status::Stored);
  auto c = s.class_stats_now();
  CHECK(c.cls[3].number == 1);
  CHECK(c.cls[4].number == 1);
  CHECK(c.cls[4].mem_requested == 156);
}

TEST_CASE("hits, touches, cas and arithmetic count in the item's class") {
  store s(small_config());
  auto now = at_sec(1);
  uint64_t cas = 0;
  REQUIRE(put(s, "k00", std::string(100, 'a'), now, 0, 0, store_mode::Set, {}, &cas) == store_status::Stored);
  REQUIRE(put(s, "n", "10", now) == store_status::Stored);  // 48 + 2 + 4 + 8: class 1
  CHECK(fetch(s, "k00", now) != "<miss>");
  CHECK(fetch(s, "k00", now) != "<miss>");
  CHECK(fetch(s, "nope", now) == "<miss>");
  CHECK(s.touch("k00", 100, now) == touch_status::Touched);
  get_options gat;
  gat.touch = true;
  gat.exptime = 100;
  gat.count_as_touch = true;
  CHECK(fetch(s, "k00", now, gat) != "<miss>");

  store_options bad;
  bad.compare_cas = cas + 1000;
  CHECK(put(s, "k00", std::string(100, 'b'), now, 0, 0, store_mode::Cas, bad) == store_status::Exists);
  store_options good;
  good.compare_cas = cas;
  arith_result ar;
  s.arithmetic("n", arith_op::Incr, 5, now, {}, ar);
  CHECK(ar.status == arith_status::Ok);
  s.arithmetic("n", arith_op::Decr, 1, now, {}, ar);
  s.arithmetic("n", arith_op::Decr, 1, now, {}, ar);

  auto c = s.class_stats_now();
  CHECK(c.cls[4].get_hits == 2);
  CHECK(c.cls[4].touch_hits == 2);
  CHECK(c.cls[4].cas_badval == 1);
  CHECK(c.cls[4].cas_hits == 0);
  CHECK(c.cls[4].cmd_set == 2);  // the set and the refused cas both got memory
  CHECK(c.cls[1].incr_hits == 1);
  CHECK(c.cls[1].decr_hits == 2);
  CHECK(c.cls[1].cmd_set == 1);  // arithmetic's own stores are not client sets
  CHECK(c.cls[1].number == 1);

  // A cas that matches counts a hit in the item's class.
  get_result r;
  s.get("k00", now, {}, r);
  good.compare_cas = r.cas;
  CHECK(put(s, "k00", std::string(100, 'c'), now, 0, 0, store_mode::Cas, good) == store_status::Stored);
  CHECK(s.class_stats_now().cls[4].cas_hits == 1);
}

TEST_CASE("append counts one set in the class of the grown item") {
  store s(small_config());
  auto now = at_sec(1);
  REQUIRE(put(s, "k00", std::string(100, 'a'), now) == store_status::Stored);
  REQUIRE(put(s, "k00", std::string(5000, 'b'), now, 0, 0, store_mode::Append) == store_status::Stored);
  auto c = s.class_stats_now();
  CHECK(c.cls[4].number == 0);
  CHECK(c.cls[19].number == 1);  // 48 + 4 + 5102 + 8 = 5162: 5680
  CHECK(c.cls[19].cmd_set == 1);
  CHECK(c.cls[4].cmd_set == 1);
}

TEST_CASE("the GC sweep counts reclaimed, expired_unfetched, items checked and age") {
  store s(small_config());
  for (int i = 0; i < 10; ++i) REQUIRE(put(s, key3(i), std::string(100, 'a'), at_sec(1), 5) == store_status::Stored);
  for (int i = 10; i < 14; ++i) REQUIRE(put(s, key3(i), std::string(100, 'a'), at_sec(3)) == store_status::Stored);
  CHECK(fetch(s, key3(0), at_sec(2)) != "<miss>");
  full_sweep(s, at_sec(4));
  auto c = s.class_stats_now();
  CHECK(c.cls[4].crawler_items_checked == 14);
  CHECK(c.cls[4].reclaimed == 0);
  // The least recent access seen: the items stored at second 1 and never read.
  CHECK(c.cls[4].oldest_atime == server_sec(at_sec(1)));

  full_sweep(s, at_sec(10));  // the ten with exptime 5 are gone
  c = s.class_stats_now();
  CHECK(c.cls[4].reclaimed == 10);
  CHECK(c.cls[4].expired_unfetched == 9);
  CHECK(c.cls[4].number == 4);
  CHECK(c.cls[4].crawler_items_checked == 28);
  CHECK(c.cls[4].oldest_atime == server_sec(at_sec(3)));
  CHECK(s.stats().reclaimed == 10);
}

TEST_CASE("a store over an expired item reclaims it; the sweep's reclaims are the crawler's") {
  store s(small_config());
  REQUIRE(put(s, "k00", std::string(100, 'a'), at_sec(1), 1) == store_status::Stored);
  REQUIRE(put(s, "k01", std::string(100, 'a'), at_sec(1), 1) == store_status::Stored);
  REQUIRE(put(s, "k00", std::string(100, 'b'), at_sec(5)) == store_status::Stored);
  auto c = s.class_stats_now();
  CHECK(c.cls[4].reclaimed == 1);
  CHECK(c.cls[4].expired_unfetched == 1);
  CHECK(c.cls[4].crawler_reclaimed == 0);
  CHECK(s.stats().reclaimed == 1);
  // Reading or deleting an expired item is no reclaim (memcached's neither).
  CHECK(fetch(s, "k01", at_sec(5)) == "<miss>");
  CHECK(s.class_stats_now().cls[4].reclaimed == 1);
  REQUIRE(put(s, "k02", std::string(100, 'a'), at_sec(5), 1) == store_status::Stored);
  full_sweep(s, at_sec(9));
  c = s.class_stats_now();
  CHECK(c.cls[4].reclaimed == 2);
  CHECK(c.cls[4].crawler_reclaimed == 1);
  CHECK(c.cls[4].number == 1);
  CHECK(s.stats().reclaimed == 2);
}

TEST_CASE("evictions by a store count as direct reclaims with their age") {
  store_config cfg;
  cfg.bucket_count = 64;
  cfg.memory_limit = 64 * 1024;
  // clock takes the oldest first; s3fifo's small queue is 16 FIFOs taken in turn, so with
  // 400 items a shard may run out of old ones and the last eviction be a new item (age 0).
  cfg.eviction = eviction_policy::clock;
  store s(cfg);
  full_sweep(s, at_sec(1));  // the clock the store's evictions read
  const std::string v(100, 'v');
  for (int i = 0; i < 2000; ++i) REQUIRE(put(s, key_n("key", i), v, at_sec(1), 60) == store_status::Stored);
  full_sweep(s, at_sec(31));
  for (int i = 0; i < 100; ++i) REQUIRE(put(s, key_n("new", i), v, at_sec(31), 60) == store_status::Stored);
  auto c = s.class_stats_now();
  uint64_t evicted = 0, direct = 0, nonzero = 0, unfetched = 0;
  for (const class_figures& f : c.cls) {
    evicted += f.evicted;
    direct += f.direct_reclaims;
    nonzero += f.evicted_nonzero;
    unfetched += f.evicted_unfetched;
  }
  CHECK(evicted > 0);
  CHECK(evicted == s.stats().evictions);
  CHECK(direct > 0);  // the stores evicted for themselves
  CHECK(nonzero == evicted);
  CHECK(unfetched == evicted);
  // Keys "keyNNNN" and "newNNN" with 100 bytes are 164 or 163 bytes: class 4.
  CHECK(c.cls[4].evicted == evicted);
  CHECK(c.cls[4].evicted_time >= 30);
  uint64_t number = 0;
  for (const class_figures& f : c.cls) number += f.number;
  CHECK(number == s.stats().curr_items);
}

TEST_CASE("counts from many threads add up") {
  store s(small_config());
  auto now = at_sec(1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 20; ++t) {  // more threads than shards
    threads.emplace_back([&s, t, now] {
      for (int i = 0; i < 200; ++i) {
        std::string k = key_n("t", t * 1000 + i);
        put(s, k, "x", now);
        fetch(s, k, now);
        if (i % 2) s.remove(k, now);
      }
    });
  }
  for (auto& th : threads) th.join();
  auto c = s.class_stats_now();
  uint64_t hits = 0, number = 0, deletes = 0;
  for (const class_figures& f : c.cls) {
    hits += f.get_hits;
    number += f.number;
    deletes += f.delete_hits;
  }
  CHECK(hits == 20 * 200);
  CHECK(deletes == 20 * 100);
  CHECK(number == 20 * 100);
  CHECK(number == s.stats().curr_items);
}
