// A replication slave's store: expiry is the master's to decide (set_expiry_by_master).
// An item past its deadline on the slave's clock is hidden from reads but kept until the
// master's DeleteQ, so a late Touch or SetQ revives or replaces it.
#include <doctest/doctest.h>

#include <string>

#include "helpers.h"

using namespace ithaca::store;
using namespace ithaca::store::test;

namespace {
constexpr int64_t kMasterBase = 1'700'000'000;  // wall clock at server time 0

gc_stats sweep_all(store& s, const store_now& now) {
  gc_stats g;
  uint64_t next = 0;
  do next = s.gc_sweep(next, s.bucket_count(), now, g);
  while (next != 0);
  return g;
}
}  // namespace

TEST_CASE("following a master: a touch after the old deadline revives the item") {
  store s(small_config());
  s.set_expiry_by_master(true);
  put(s, "k", "v", at_sec(10), kMasterBase + 12);  // absolute: deadline at server second 12
  CHECK(fetch(s, "k", at_sec(11)) == "v");
  CHECK(fetch(s, "k", at_sec(13)) == "<miss>");  // hidden from reads here
  CHECK(s.stats().get_expired == 1);
  sweep_all(s, at_sec(13));  // and the GC keeps it for the master's word
  CHECK(s.stats().curr_items == 1);
  CHECK(s.touch("k", kMasterBase + 100, at_sec(14)) == touch_status::Touched);
  CHECK(fetch(s, "k", at_sec(15)) == "v");
}

TEST_CASE("without a master the same touch finds nothing (memcached's rules)") {
  store s(small_config());
  put(s, "k", "v", at_sec(10), kMasterBase + 12);
  CHECK(s.touch("k", kMasterBase + 100, at_sec(14)) == touch_status::NotFound);
  CHECK(fetch(s, "k", at_sec(15)) == "<miss>");
}

TEST_CASE("following a master: a set whose deadline has passed here is kept, hidden") {
  store s(small_config());
  s.set_expiry_by_master(true);
  put(s, "k", "v", at_sec(20), kMasterBase + 12);  // the master's deadline, already past here
  CHECK(fetch(s, "k", at_sec(20)) == "<miss>");
  CHECK(s.stats().curr_items == 1);
  CHECK(s.touch("k", 0, at_sec(21)) == touch_status::Touched);
  CHECK(fetch(s, "k", at_sec(22)) == "v");
}

TEST_CASE("following a master: a set replaces a kept item in place, an add may store over it") {
  store s(small_config());
  s.set_expiry_by_master(true);
  put(s, "k", "old", at_sec(10), kMasterBase + 12);
  put(s, "k", "new", at_sec(13), 0);
  CHECK(fetch(s, "k", at_sec(14)) == "new");
  CHECK(s.stats().curr_items == 1);
  put(s, "a", "old", at_sec(10), kMasterBase + 12);
  CHECK(put(s, "a", "added", at_sec(13), 0, 0, store_mode::Add) == store_status::Stored);
  CHECK(fetch(s, "a", at_sec(14)) == "added");
  CHECK(s.stats().curr_items == 2);
  sweep_all(s, at_sec(15));
  CHECK(s.stats().curr_items == 2);
}

TEST_CASE("following a master: its delete removes a kept item, flush_all still reclaims") {
  store s(small_config());
  s.set_expiry_by_master(true);
  put(s, "k", "v", at_sec(10), kMasterBase + 12);
  put(s, "f", "v", at_sec(10), kMasterBase + 12);
  CHECK(s.remove("k", at_sec(13)) == remove_status::Deleted);
  CHECK(s.touch("k", 0, at_sec(13)) == touch_status::NotFound);
  s.flush_all(at_sec(13));
  sweep_all(s, at_sec(13));
  CHECK(s.stats().curr_items == 0);
  CHECK(s.stats().bytes == 0);
}

TEST_CASE("promoted: expiry is local again and the GC reclaims what passed its deadline") {
  store s(small_config());
  s.set_expiry_by_master(true);
  put(s, "k", "v", at_sec(10), kMasterBase + 12);
  put(s, "live", "v", at_sec(10), 0);
  sweep_all(s, at_sec(13));
  CHECK(s.stats().curr_items == 2);
  s.set_expiry_by_master(false);
  const gc_stats g = sweep_all(s, at_sec(13));
  CHECK(g.reclaimed == 1);
  CHECK(s.stats().curr_items == 1);
  CHECK(fetch(s, "live", at_sec(13)) == "v");
}

TEST_CASE("following a master: a scan (an initial sync) skips a kept expired item") {
  store s(small_config());
  s.set_expiry_by_master(true);
  put(s, "k", "v", at_sec(10), kMasterBase + 12);
  put(s, "live", "v", at_sec(10), 0);
  int seen = 0;
  std::string key;
  uint64_t next = 0;
  do
    next = s.scan(next, s.bucket_count(), at_sec(13), [&](const item_view& v) {
      ++seen;
      key = std::string(v.key);
    });
  while (next != 0);
  CHECK(seen == 1);
  CHECK(key == "live");
}
