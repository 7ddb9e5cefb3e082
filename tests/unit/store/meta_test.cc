#include <doctest/doctest.h>

#include <string>

#include "helpers.h"

using namespace ithaca::store;
using namespace ithaca::store::test;

TEST_CASE("mg N: vivify on miss, the first caller wins, later ones see Z") {
  store s(small_config());
  get_options o;
  o.vivify = true;
  o.vivify_exptime = 30;
  get_result r;
  s.get("k", at_sec(1), o, r);
  CHECK(r.status == get_status::Miss);
  CHECK(r.vivified);
  CHECK(r.win);
  CHECK(r.ttl == 30);
  s.get("k", at_sec(2), o, r);
  CHECK(r.status == get_status::Hit);
  CHECK(!r.vivified);
  CHECK(!r.win);
  CHECK(r.win_sent);
  CHECK(r.value.empty());
  // The winner's set clears the token state.
  put(s, "k", "v", at_sec(3), 30);
  s.get("k", at_sec(3), o, r);
  CHECK(r.value == "v");
  CHECK(!r.win_sent);
  CHECK(!r.win);
}

TEST_CASE("mg R: recache when the remaining TTL is below the threshold") {
  store s(small_config());
  put(s, "k", "v", at_sec(1), 100);
  get_options o;
  o.recache_threshold = 30;
  get_result r;
  s.get("k", at_sec(50), o, r);
  CHECK(!r.win);
  s.get("k", at_sec(80), o, r);
  CHECK(r.win);
  CHECK(r.ttl == 21);
  s.get("k", at_sec(81), o, r);
  CHECK(!r.win);
  CHECK(r.win_sent);
}

TEST_CASE("md I marks stale; readers get X with one W; ms I with an older cas stores stale") {
  store s(small_config());
  uint64_t cas0 = 0;
  put(s, "k", "v1", at_sec(1), 0, 0, store_mode::Set, {}, &cas0);
  remove_options d;
  d.invalidate = true;
  d.touch = true;
  d.exptime = 30;
  CHECK(s.remove("k", at_sec(2), d) == remove_status::Deleted);
  get_result r;
  s.get("k", at_sec(3), {}, r);
  CHECK(r.status == get_status::Hit);
  CHECK(r.value == "v1");
  CHECK(r.stale);
  CHECK(r.win);
  CHECK(r.ttl == 29);
  CHECK(r.cas > cas0);
  s.get("k", at_sec(3), {}, r);
  CHECK(r.stale);
  CHECK(!r.win);
  CHECK(r.win_sent);
  const uint64_t stale_cas = r.cas;

  // A writer that read before the invalidation (older cas) may store, but stays stale.
  store_options o;
  o.compare_cas = cas0;
  o.invalidate = true;
  CHECK(put(s, "k", "v2", at_sec(4), 0, 0, store_mode::Set, o) == store_status::Stored);
  s.get("k", at_sec(4), {}, r);
  CHECK(r.value == "v2");
  CHECK(r.stale);
  CHECK(r.win_sent);
  CHECK(r.ttl == 28);  // keeps the stale item's TTL
  // Without I the mismatch is a plain Exists.
  o.invalidate = false;
  CHECK(put(s, "k", "v3", at_sec(4), 0, 0, store_mode::Set, o) == store_status::Exists);
  // A cas newer than the item's is not "older": Exists even with I.
  o.invalidate = true;
  o.compare_cas = r.cas + 1000;
  CHECK(put(s, "k", "v3", at_sec(4), 0, 0, store_mode::Set, o) == store_status::Exists);
  // The current cas: a normal store, no longer stale.
  o.compare_cas = r.cas;
  CHECK(put(s, "k", "v4", at_sec(5), 0, 0, store_mode::Set, o) == store_status::Stored);
  s.get("k", at_sec(5), {}, r);
  CHECK(r.value == "v4");
  CHECK(!r.stale);
  CHECK(!r.win_sent);
  (void)stale_cas;
}

TEST_CASE("mg h, l and no-bump") {
  store s(small_config());
  put(s, "k", "v", at_sec(1));
  get_options peek;
  peek.bump = false;
  get_result r;
  s.get("k", at_sec(5), peek, r);
  CHECK(!r.fetched_before);
  CHECK(r.last_access == 4);
  s.get("k", at_sec(6), {}, r);
  CHECK(!r.fetched_before);
  CHECK(r.last_access == 5);
  s.get("k", at_sec(9), {}, r);
  CHECK(r.fetched_before);
  CHECK(r.last_access == 3);
}

TEST_CASE("get reuses the caller's buffer and grows it outside the lock") {
  store s(small_config());
  const std::string big(100000, 'b');
  put(s, "k", big, at_sec(1));
  get_result r;
  s.get("k", at_sec(1), {}, r);
  CHECK(r.value == big);
  put(s, "k", "small", at_sec(1));
  s.get("k", at_sec(1), {}, r);
  CHECK(r.value == "small");
  CHECK(r.value.capacity() >= big.size());
  CHECK(s.stats().get_hits == 2);
}
