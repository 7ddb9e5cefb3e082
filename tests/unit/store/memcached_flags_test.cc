// The store under memcached's -M (evictions off) and -C (cas off).
#include <doctest/doctest.h>

#include <string>

#include "helpers.h"

using namespace ithaca::store;
using namespace ithaca::store::test;

namespace {

store_config no_evictions() {
  store_config c;
  c.bucket_count = 64;
  c.memory_limit = 256 * 1024;
  c.evictions = false;
  return c;
}

// Stores 1 KiB values until one is refused; how many were stored.
int fill(store& s, const store_now& now, std::string_view prefix = "k") {
  const std::string v(1024, 'v');
  for (int i = 0; i < 10000; ++i) {
    if (put(s, key_n(prefix, i), v, now) != store_status::Stored) return i;
  }
  FAIL("10000 values of 1 KiB fit in 256 KiB");
  return 0;
}

void flags_full_sweep(store& s, const store_now& now) {
  gc_stats g;
  uint64_t next = 0;
  do {
    next = s.gc_sweep(next, 16, now, g);
  } while (next != 0);
}

uint64_t get_cas(store& s, std::string_view key, const store_now& now, bool item_cas = false) {
  get_options o;
  o.item_cas = item_cas;
  get_result r;
  s.get(key, now, o, r);
  REQUIRE(r.status == get_status::Hit);
  return r.cas;
}

}  // namespace

TEST_CASE("-M: a store that does not fit is refused; what is stored stays") {
  store s(no_evictions());
  const auto now = at_sec(1);
  const int n = fill(s, now);
  CHECK(n > 100);
  CHECK(put(s, "more", std::string(1024, 'v'), now) == store_status::OutOfMemory);
  CHECK(s.stats().evictions == 0);
  CHECK(s.stats().out_of_memory >= 2);
  for (int i = 0; i < n; ++i) CHECK(fetch(s, key_n("k", i), now) == std::string(1024, 'v'));
  // The GC sweep above its high watermark evicts nothing either.
  flags_full_sweep(s, at_sec(2));
  CHECK(s.stats().evictions == 0);
  CHECK(fetch(s, "k0", at_sec(2)) != "<miss>");
}

TEST_CASE("-M: expired and flushed items still make room at once") {
  store s(no_evictions());
  const int n = fill(s, at_sec(1));
  s.flush_all(at_sec(1));
  // No GC sweep in between: the stores reclaim the flushed items themselves.
  CHECK(fill(s, at_sec(1), "after") >= n - 2);
  CHECK(s.stats().evictions == 0);
  CHECK(s.stats().reclaimed > 0);
}

TEST_CASE("-M is live: turned on again, a store evicts") {
  store s(no_evictions());
  fill(s, at_sec(1));
  s.set_evictions(true);
  CHECK(put(s, "more", std::string(1024, 'v'), at_sec(1)) == store_status::Stored);
  CHECK(s.stats().evictions > 0);
}

TEST_CASE("-C: clients see CAS 0 and compare against it as memcached -C does") {
  store_config c = small_config();
  c.cas_enabled = false;
  store s(c);
  const auto now = at_sec(1);
  uint64_t cas = 1;
  REQUIRE(put(s, "a", "x", now, 0, 0, store_mode::Set, {}, &cas) == store_status::Stored);
  CHECK(cas == 0);
  CHECK(get_cas(s, "a", now) == 0);
  CHECK(get_cas(s, "a", now, true) != 0);  // the item's own, for leases
  // A cas store never matches a live item and misses a missing one.
  store_options o;
  o.compare_cas = 0;
  CHECK(put(s, "a", "y", now, 0, 0, store_mode::Cas, o) == store_status::Exists);
  o.compare_cas = get_cas(s, "a", now, true);
  CHECK(put(s, "a", "y", now, 0, 0, store_mode::Cas, o) == store_status::Exists);
  CHECK(put(s, "zz", "y", now, 0, 0, store_mode::Cas, o) == store_status::NotFound);
  // ... but a lease over a stale item, which compares the item's own CAS, does.
  o.item_cas = true;
  CHECK(put(s, "a", "y", now, 0, 0, store_mode::Cas, o) == store_status::Stored);
  // Append ignores a CAS; delete and arithmetic see any but 0 as different.
  store_options append;
  append.compare_cas = 5;
  CHECK(put(s, "a", "z", now, 0, 0, store_mode::Append, append) == store_status::Stored);
  CHECK(fetch(s, "a", now) == "yz");
  remove_options rm;
  rm.compare_cas = 5;
  CHECK(s.remove("a", now, rm) == remove_status::Exists);
  REQUIRE(put(s, "n", "1", now) == store_status::Stored);
  arith_options ao;
  ao.compare_cas = 5;
  arith_result ar;
  s.arithmetic("n", arith_op::Incr, 1, now, ao, ar);
  CHECK(ar.status == arith_status::Exists);
  s.arithmetic("n", arith_op::Incr, 1, now, {}, ar);
  CHECK(ar.status == arith_status::Ok);
  CHECK(ar.value == 2);
  CHECK(ar.cas == 0);
  rm.compare_cas = 0;
  CHECK(s.remove("a", now, rm) == remove_status::Deleted);
  // An explicit CAS (meta E) is ignored.
  store_options e;
  e.explicit_cas = 77;
  REQUIRE(put(s, "e", "x", now, 0, 0, store_mode::Set, e) == store_status::Stored);
  CHECK(get_cas(s, "e", now, true) != 77);
  // flush_all still orders items by their own CAS.
  s.flush_all(now);
  CHECK(fetch(s, "e", now) == "<miss>");
  REQUIRE(put(s, "e", "x", now) == store_status::Stored);
  CHECK(fetch(s, "e", now) == "x");
}

TEST_CASE("-C: memcached's item sizes lose their 8 bytes of CAS") {
  store_config on = small_config();
  store_config off = small_config();
  off.cas_enabled = false;
  store a(on), b(off);
  const std::string v(98, 'v');  // 3-byte key: 160 bytes with CAS (class 4), 152 without (class 3)
  REQUIRE(put(a, "abc", v, at_sec(1)) == store_status::Stored);
  REQUIRE(put(b, "abc", v, at_sec(1)) == store_status::Stored);
  CHECK(a.item_bytes() == 160);
  CHECK(b.item_bytes() == 152);
  CHECK(a.class_stats_now().cls[4].number == 1);
  CHECK(b.class_stats_now().cls[3].number == 1);
}
