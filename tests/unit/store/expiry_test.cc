#include <doctest/doctest.h>

#include <string>

#include "helpers.h"

using namespace ithaca::store;
using namespace ithaca::store::test;

namespace {
constexpr int64_t kBase = 1'700'000'000;  // wall clock at server time 0
}

TEST_CASE("exptime 0 never expires") {
  store s(small_config());
  put(s, "k", "v", at_sec(10), 0);
  CHECK(fetch(s, "k", at_sec(10 + 100 * 86400)) == "v");
}

TEST_CASE("exptime 1 is relative: gone one second later") {
  store s(small_config());
  put(s, "k", "v", at_sec(10), 1);
  get_result r;
  s.get("k", at_sec(10), {}, r);
  CHECK(r.ttl == 1);
  CHECK(fetch(s, "k", store_now{10'999, kBase}) == "v");
  CHECK(fetch(s, "k", at_sec(11)) == "<miss>");
  CHECK(s.stats().get_expired == 1);
  CHECK(s.stats().curr_items == 0);
}

TEST_CASE("exptime 2592000 (30 days) is still relative") {
  store s(small_config());
  put(s, "k", "v", at_sec(10), 2592000);
  CHECK(fetch(s, "k", at_sec(10 + 2592000 - 1)) == "v");
  CHECK(fetch(s, "k", at_sec(10 + 2592000)) == "<miss>");
}

TEST_CASE("exptime 2592001 is an absolute unix time, here long past: expired at once") {
  store s(small_config());
  put(s, "k", "old", at_sec(10));
  CHECK(put(s, "k", "v", at_sec(10), 2592001) == store_status::Stored);
  CHECK(fetch(s, "k", at_sec(10)) == "<miss>");
  CHECK(s.stats().curr_items == 0);
}

TEST_CASE("absolute exptime in the future") {
  store s(small_config());
  put(s, "k", "v", at_sec(10), kBase + 110);
  get_result r;
  s.get("k", at_sec(10), {}, r);
  CHECK(r.ttl == 100);
  CHECK(fetch(s, "k", at_sec(109)) == "v");
  CHECK(fetch(s, "k", at_sec(110)) == "<miss>");
}

TEST_CASE("absolute exptime equal to now is expired") {
  store s(small_config());
  put(s, "k", "v", at_sec(10), kBase + 10);
  CHECK(fetch(s, "k", at_sec(10)) == "<miss>");
}

TEST_CASE("negative exptime: stored, immediately invisible, replaces the old item") {
  store s(small_config());
  put(s, "k", "old", at_sec(10));
  CHECK(put(s, "k", "v", at_sec(10), -1) == store_status::Stored);
  CHECK(fetch(s, "k", at_sec(10)) == "<miss>");
  CHECK(put(s, "k", "x", at_sec(10), 0, 0, store_mode::Add) == store_status::Stored);
  CHECK(s.touch("k", -1, at_sec(10)) == touch_status::Touched);
  CHECK(fetch(s, "k", at_sec(10)) == "<miss>");
}

TEST_CASE("GC sweep removes expired items and counts unfetched ones") {
  store s(small_config());
  for (int i = 0; i < 100; ++i) put(s, key_n("k", i), "v", at_sec(1), i < 60 ? 5 : 0);
  for (int i = 0; i < 10; ++i) fetch(s, key_n("k", i), at_sec(2));
  gc_stats g;
  uint64_t next = 0;
  do {
    next = s.gc_sweep(next, 100, at_sec(10), g);
  } while (next != 0);
  CHECK(g.reclaimed == 60);
  CHECK(g.expired_unfetched == 50);
  CHECK(g.visited == 100);
  auto st = s.stats();
  CHECK(st.curr_items == 40);
  CHECK(st.reclaimed == 60);
  CHECK(st.expired_unfetched == 50);
  CHECK(fetch(s, "k70", at_sec(10)) == "v");
}

TEST_CASE("GC sweep reclaims flushed items") {
  store s(small_config());
  for (int i = 0; i < 10; ++i) put(s, key_n("k", i), "v", at_sec(1));
  s.flush_all(at_sec(1));
  gc_stats g;
  s.gc_sweep(0, s.bucket_count(), at_sec(2), g);
  CHECK(g.reclaimed == 10);
  CHECK(s.stats().curr_items == 0);
  CHECK(s.mem_used() == 0);
}
