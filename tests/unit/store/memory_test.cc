#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "helpers.h"

using namespace ithaca::store;
using namespace ithaca::store::test;

namespace {

void full_sweep(store& s, const store_now& now, gc_stats& g) {
  uint64_t next = 0;
  do {
    next = s.gc_sweep(next, 16, now, g);
  } while (next != 0);
}

}  // namespace

TEST_CASE("memory accounting returns to zero") {
  store s(small_config());
  auto now = at_sec(1);
  for (int i = 0; i < 100; ++i) put(s, key_n("k", i), std::string(100, 'v'), now);
  CHECK(s.mem_used() >= 100 * (40 + 2 + 100));
  CHECK(s.mem_used() <= 100 * 176);
  for (int i = 0; i < 100; ++i) s.remove(key_n("k", i), now);
  CHECK(s.mem_used() == 0);
  CHECK(s.stats().bytes == 0);
}

TEST_CASE("inline eviction keeps usage under the limit and evicts the coldest first") {
  store_config c;
  c.eviction = eviction_policy::clock;  // s3fifo's order: s3fifo_test.cc
  c.bucket_count = 64;                  // one sample covers the table: deterministic
  c.memory_limit = 256 * 1024;
  store s(c);
  const std::string v(100, 'v');
  auto now = at_sec(1);
  for (int i = 0; i < 1000; ++i) REQUIRE(put(s, key_n("old", i), v, now) == store_status::Stored);
  REQUIRE(s.stats().evictions == 0);
  gc_stats g;
  full_sweep(s, at_sec(2), g);                                             // every counter is now 1
  for (int i = 0; i < 1000; i += 2) fetch(s, key_n("old", i), at_sec(3));  // the even ones are hot again
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(put(s, key_n("new", i), v, at_sec(3)) == store_status::Stored);
    CHECK(s.mem_used() <= c.memory_limit);
  }
  auto st = s.stats();
  CHECK(st.evictions > 0);
  CHECK(st.evicted_unfetched == st.evictions);
  int even = 0, odd = 0, fresh = 0;
  for (int i = 0; i < 1000; ++i) {
    get_options peek;
    peek.bump = false;
    if (fetch(s, key_n("old", i), at_sec(3), peek) != "<miss>") ++(i % 2 ? odd : even);
    if (fetch(s, key_n("new", i), at_sec(3), peek) != "<miss>") ++fresh;
  }
  CHECK(even == 500);  // accessed since the sweep: the warmest
  CHECK(odd < 500);    // aged by a sweep and never read: evicted first
  CHECK(fresh == 1000);
  CHECK(st.curr_items == static_cast<uint64_t>(even + odd + fresh));
}

TEST_CASE("OutOfMemory when nothing can be evicted") {
  store_config c = small_config();
  c.memory_limit = 4096;
  store s(c);
  store_result r;
  std::string big(8000, 'x');
  s.set("k", store_mode::Set, {big.data(), big.size()}, 0, 0, at_sec(1), {}, r);
  CHECK(r.status == store_status::OutOfMemory);
  CHECK(s.mem_used() == 0);
  CHECK(s.stats().out_of_memory == 1);
  // Small items fit, and a new one evicts an old one rather than failing.
  for (int i = 0; i < 200; ++i) {
    CHECK(put(s, key_n("k", i), std::string(100, 'v'), at_sec(1)) == store_status::Stored);
    CHECK(s.mem_used() <= c.memory_limit);
  }
  CHECK(s.stats().evictions > 0);
}

TEST_CASE("GC evicts cold items above the high watermark down to the low one") {
  store_config c;
  c.eviction = eviction_policy::clock;  // s3fifo evicts no sooner than needed
  c.bucket_count = 256;
  c.memory_limit = 512 * 1024;
  store s(c);
  const std::string v(200, 'v');
  int n = 0;
  while (s.mem_used() < c.memory_limit / 100 * 95)
    REQUIRE(put(s, key_n("k", n++), v, at_sec(1)) == store_status::Stored);
  REQUIRE(s.stats().evictions == 0);
  const int hot = n / 5;
  for (int i = 0; i < hot; ++i) fetch(s, key_n("k", i), at_sec(3));
  gc_stats g;
  full_sweep(s, at_sec(4), g);  // the first pass above the watermark already evicts
  CHECK(g.evictions > 0);
  CHECK(g.evicted_unfetched == g.evictions);
  CHECK(s.mem_used() <= c.memory_limit / 100 * 80);
  CHECK(s.mem_used() > c.memory_limit / 100 * 60);  // and it did not evict everything
  get_options peek;
  peek.bump = false;
  for (int i = 0; i < hot; ++i) CHECK(fetch(s, key_n("k", i), at_sec(4), peek) != "<miss>");
  // Under the high watermark again: the next pass evicts nothing.
  gc_stats quiet;
  full_sweep(s, at_sec(5), quiet);
  CHECK(quiet.evictions == 0);
  CHECK(s.stats().evictions == g.evictions);
}

TEST_CASE("a lowered memory limit is reached by the GC sweep; a raised one lets stores in") {
  store_config c = small_config();
  c.memory_limit = 1024 * 1024;
  store s(c);
  const std::string v(1000, 'v');
  auto now = at_sec(1);
  for (int i = 0; i < 800; ++i) REQUIRE(put(s, key_n("k", i), v, now) == store_status::Stored);
  const uint64_t before = s.mem_used();
  REQUIRE(before > 512 * 1024);
  gc_stats g;
  full_sweep(s, at_sec(2), g);  // a full pass: its histogram guides eviction
  REQUIRE(g.evictions == 0);

  s.set_memory_limit(256 * 1024);
  CHECK(s.memory_limit() == 256 * 1024);
  full_sweep(s, at_sec(3), g);
  CHECK(g.evictions > 0);
  CHECK(s.mem_used() <= 256 * 1024);

  s.set_memory_limit(2 * 1024 * 1024);
  for (int i = 0; i < 1500; ++i) REQUIRE(put(s, key_n("n", i), v, at_sec(4)) == store_status::Stored);
  CHECK(s.mem_used() > 1024 * 1024);
}

TEST_CASE("item_size_max and the large value threshold change for the next store") {
  store s(small_config());
  auto now = at_sec(1);
  const std::string v(4000, 'v');
  s.set_item_size_max(2048);
  CHECK(put(s, "k", v, now) == store_status::TooLarge);
  s.set_item_size_max(1 << 20);
  CHECK(put(s, "k", v, now) == store_status::Stored);
  CHECK(s.stats().large_values == 0);
  s.set_large_value_threshold(1024);
  CHECK(put(s, "big", v, now) == store_status::Stored);
  CHECK(s.stats().large_values == 1);
  CHECK(fetch(s, "big", now) == v);
}

TEST_CASE("the eviction observer sees each evicted item with its fields") {
  struct recorder final : eviction_observer {
    struct seen {
      std::string key;
      uint32_t flags;
      uint64_t size;
      uint32_t deadline;
      uint32_t atime;
      bool fetched;
    };
    std::vector<seen> items;
    void on_evict(const evicted_item& it) noexcept override {
      items.push_back({std::string(it.key), it.flags, it.value_size, it.deadline, it.atime, it.fetched});
    }
  };
  store_config c;
  c.bucket_count = 64;
  c.memory_limit = 64 * 1024;
  store s(c);
  recorder rec;
  s.set_eviction_observer(&rec);
  const std::string v(100, 'v');
  for (int i = 0; i < 1000; ++i)
    REQUIRE(put(s, key_n("k", i), v, at_sec(5), i % 2 ? 0 : 100, 7) == store_status::Stored);
  const uint64_t evictions = s.stats().evictions;
  REQUIRE(evictions > 0);
  CHECK(rec.items.size() == evictions);  // one call per eviction, no more
  for (const auto& it : rec.items) {
    CHECK(it.key.starts_with("k"));
    CHECK(it.flags == 7);
    CHECK(it.size == 100);
    CHECK_FALSE(it.fetched);
    CHECK(it.atime == server_sec(at_sec(5)));
    const int i = std::stoi(it.key.substr(1));
    CHECK(it.deadline == (i % 2 ? kNever : to_deadline(100, at_sec(5))));
    get_options peek;
    peek.bump = false;
    get_result r;
    s.get(it.key, at_sec(5), peek, r);
    CHECK(r.status == get_status::Miss);  // it was really removed
  }
}

// The regression behind a flaky over-the-wire test: a pass that ran while the cache was
// half full, then a burst that turned the cache over several times (stores evicting
// inline, whose sampling hand ages what it passes), then a pass above the high
// watermark. The sweep's threshold must come from the items there are now: one taken
// from the old pass's histogram (every item at one visit) evicted any item the
// sampling hand had passed once, the newest ones among them.
TEST_CASE("the GC sweep evicts the coldest items there are now, not by an old pass's scores") {
  store_config c;
  c.eviction = eviction_policy::clock;  // the watermarks' eviction is clock's
  c.bucket_count = 16384;
  c.memory_limit = 2 * 1024 * 1024;
  store s(c);
  const std::string v(1000, 'v');
  int n = 0;
  while (s.mem_used() < c.memory_limit / 2) REQUIRE(put(s, key_n("k", n++), v, at_sec(1)) == store_status::Stored);
  gc_stats g;
  full_sweep(s, at_sec(1), g);
  CHECK(g.evictions == 0);
  for (int i = 0; i < 10000; ++i) REQUIRE(put(s, key_n("k", n++), v, at_sec(1)) == store_status::Stored);
  REQUIRE(s.stats().evictions > 0);
  INFO("used " << s.mem_used() << " top " << s.region().top() << " free " << s.region().free_bytes());
  REQUIRE(s.mem_used() > c.memory_limit / 100 * 90);
  full_sweep(s, at_sec(2), g);
  CHECK(g.evictions > 0);
  CHECK(s.mem_used() <= c.memory_limit / 100 * 80);
  get_options peek;
  peek.bump = false;
  int lost = 0;
  for (int i = n - 300; i < n; ++i) lost += fetch(s, key_n("k", i), at_sec(2), peek) == "<miss>";
  CHECK(lost == 0);
}
