// Pinned gets (get_options::pin, item_ref.h): the lifetime of an item a reader still holds
// across overwrite, delete, flush_all, expiry and eviction, its memory charge until the last
// pin goes, and a multi-threaded race of pinned readers against writers and the GC (run it
// under the sanitize build: a read of a freed item is an ASan error there).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "helpers.h"

using namespace ithaca::store;
using namespace ithaca::store::test;

namespace {

get_options pinned() {
  get_options o;
  o.pin = true;
  return o;
}

// A self-describing value: "<key>#<version>#" then bytes derived from both, to `size`.
std::string pattern(std::string_view key, uint64_t version, size_t size) {
  std::string v(key);
  v += '#';
  v += std::to_string(version);
  v += '#';
  uint64_t x = version * 0x9e3779b97f4a7c15ull + key.size();
  const size_t head = v.size();
  v.resize(std::max(size, head) + sizeof x);
  for (size_t at = head; at < size; at += sizeof x) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(v.data() + at, &x, sizeof x);
  }
  v.resize(size);
  return v;
}

// True if `v` is exactly pattern(key, version, v.size()) for the version it names.
bool intact(std::string_view key, std::string_view v) {
  if (v.size() <= key.size() + 1 || v.substr(0, key.size()) != key || v[key.size()] != '#') return false;
  const size_t end = v.find('#', key.size() + 1);
  if (end == std::string_view::npos) return false;
  const uint64_t version = std::stoull(std::string(v.substr(key.size() + 1, end - key.size() - 1)));
  return pattern(key, version, v.size()) == v;
}

}  // namespace

TEST_CASE("a pinned get hands out the item itself, not a copy") {
  store s(small_config());
  auto now = at_sec(1);
  const std::string v = pattern("k", 1, 4096);
  put(s, "k", v, now);
  get_result r;
  s.get("k", now, pinned(), r);
  REQUIRE(r.status == get_status::Hit);
  CHECK(r.pinned);
  CHECK(r.value.empty());
  CHECK(r.value_view() == v);
  CHECK(r.value_size == v.size());
  // Two reads of the same item point at the same bytes: the item's.
  get_result r2;
  s.get("k", now, pinned(), r2);
  CHECK(r2.value_view().data() == r.value_view().data());
  // Without pin the value is copied, as before.
  get_result c;
  s.get("k", now, {}, c);
  CHECK_FALSE(c.pinned);
  CHECK(c.value == v);
  CHECK(c.value.data() != r.value_view().data());
}

TEST_CASE("a pin outlives an overwrite, and the old item counts until it is released") {
  store s(small_config());
  auto now = at_sec(1);
  put(s, "k", pattern("k", 1, 4096), now);
  const uint64_t one = s.mem_used();
  get_result r;
  s.get("k", now, pinned(), r);
  put(s, "k", pattern("k", 2, 4096), now);
  // The new value is what readers see; the pinned reader still has the old one, whole.
  CHECK(fetch(s, "k", now) == pattern("k", 2, 4096));
  CHECK(r.value_view() == pattern("k", 1, 4096));
  CHECK(s.stats().curr_items == 1);
  CHECK(s.mem_used() == 2 * one);  // the unlinked, pinned item is still charged
  r.pinned.reset();
  CHECK(s.mem_used() == one);
}

TEST_CASE("a pin outlives delete, flush_all and expiry") {
  store s(small_config());
  auto now = at_sec(1);
  put(s, "d", pattern("d", 1, 700), now);
  put(s, "f", pattern("f", 1, 700), now);
  put(s, "e", pattern("e", 1, 700), now, 5);
  get_result rd, rf, re;
  s.get("d", now, pinned(), rd);
  s.get("f", now, pinned(), rf);
  s.get("e", now, pinned(), re);
  const uint64_t all = s.mem_used();
  CHECK(s.remove("d", now) == remove_status::Deleted);
  s.flush_all(now);
  const auto later = at_sec(100);
  CHECK(fetch(s, "f", later) == "<miss>");  // unlinks the flushed item
  CHECK(fetch(s, "e", later) == "<miss>");  // and the expired one
  CHECK(s.stats().curr_items == 0);
  CHECK(s.mem_used() == all);
  CHECK(rd.value_view() == pattern("d", 1, 700));
  CHECK(rf.value_view() == pattern("f", 1, 700));
  CHECK(re.value_view() == pattern("e", 1, 700));
  rd.pinned.reset();
  rf.pinned.reset();
  CHECK(s.mem_used() > 0);
  re.pinned.reset();
  CHECK(s.mem_used() == 0);
}

TEST_CASE("many pins on one item: the last release frees it, in any order") {
  store s(small_config());
  auto now = at_sec(1);
  put(s, "k", pattern("k", 1, 2000), now);
  std::vector<get_result> rs(50);
  for (auto& r : rs) s.get("k", now, pinned(), r);
  s.remove("k", now);
  const uint64_t held = s.mem_used();
  CHECK(held > 0);
  for (size_t i = 0; i < rs.size(); i += 2) rs[i].pinned.reset();
  CHECK(s.mem_used() == held);
  for (size_t i = 1; i < rs.size(); i += 2) {
    CHECK(rs[i].value_view() == pattern("k", 1, 2000));
    rs[i].pinned.reset();
  }
  CHECK(s.mem_used() == 0);
}

TEST_CASE("the next get drops the previous call's pin; a moved ref keeps it") {
  store s(small_config());
  auto now = at_sec(1);
  put(s, "a", pattern("a", 1, 1000), now);
  put(s, "b", pattern("b", 1, 1000), now);
  get_result r;
  s.get("a", now, pinned(), r);
  item_ref kept = std::move(r.pinned);
  CHECK_FALSE(r.pinned);
  s.remove("a", now);
  s.get("b", now, pinned(), r);  // r held nothing: nothing to drop
  s.get("b", now, {}, r);        // drops b's pin
  CHECK_FALSE(r.pinned);
  CHECK(kept.value() == pattern("a", 1, 1000));
  const uint64_t with_a = s.mem_used();
  void* object = nullptr;
  void* context = nullptr;
  kept.detach(object, context);  // as the executor hands it to the out_buffer
  CHECK_FALSE(kept);
  CHECK(s.mem_used() == with_a);
  item_ref::release(object, context);
  CHECK(s.mem_used() < with_a);
  s.remove("b", now);
  CHECK(s.mem_used() == 0);
}

TEST_CASE("a large value is not pinned: it comes as its ref") {
  store_config c = small_config();
  c.large_value_threshold = 1024;
  store s(c);
  if (!s.large_values_available()) return;
  auto now = at_sec(1);
  put(s, "big", pattern("big", 1, 5000), now);
  get_result r;
  s.get("big", now, pinned(), r);
  REQUIRE(r.status == get_status::Hit);
  CHECK_FALSE(r.pinned);
  REQUIRE(r.large);
  std::string v;
  CHECK(r.large.read_all(v));
  CHECK(v == pattern("big", 1, 5000));
}

TEST_CASE("a pinned item survives its eviction; usage comes back under the limit once released") {
  store_config c;
  c.eviction = eviction_policy::clock;  // s3fifo keeps a read item while only unread ones come
  c.bucket_count = 64;
  c.memory_limit = 64 * 1024;
  store s(c);
  auto now = at_sec(1);
  put(s, "pinned", pattern("pinned", 1, 4096), now);
  get_result r;
  s.get("pinned", now, pinned(), r);
  // Fill until it is evicted (the oldest: the sampling hand has aged it most).
  get_options peek;
  peek.bump = false;
  for (int i = 0; i < 1000 && fetch(s, "pinned", now, peek) != "<miss>"; ++i)
    put(s, key_n("fill", i), pattern("fill", static_cast<uint64_t>(i), 4096), now);
  CHECK(fetch(s, "pinned", now, peek) == "<miss>");
  CHECK(s.stats().evictions > 0);
  CHECK(r.value_view() == pattern("pinned", 1, 4096));
  CHECK(s.mem_used() <= c.memory_limit);
  r.pinned.reset();
  CHECK(s.mem_used() <= c.memory_limit);
}

TEST_CASE("pinned readers of 4 KiB and 256 KiB values race overwrites, deletes and evictions") {
  // Small memory limit: the 256 KiB values evict each other all the time. Readers keep up to
  // kHold pins at once and release them late (a slow socket), checking every byte both
  // when they get the value and when they let it go.
  store_config c;
  c.bucket_count = 256;
  c.memory_limit = 4 << 20;
  store s(c);
  constexpr int kReaders = 3;
  constexpr int kWriters = 2;
  constexpr int kKeysEach = 16;
  constexpr size_t kHold = 24;
  constexpr int kReads = 3000;
  // A bound that only a broken store reaches: under the sanitizers the writers and the
  // GC evict so much that a reader may need hundreds of thousands of gets for its hits.
  constexpr int kMaxReads = 5000000;
  constexpr uint64_t kHits = 400;  // per reader
  std::atomic<bool> stop{false};
  constexpr uint64_t kWrites = 600;  // readers go on until the writers did this many
  std::atomic<uint64_t> torn{0}, hits{0}, max_used{0}, writes{0};
  auto key_of = [](int i) { return key_n(i % 2 ? "big" : "small", i); };
  auto size_of = [](int i) { return i % 2 ? size_t{256} << 10 : size_t{4096}; };

  for (int i = 0; i < 2 * kKeysEach; ++i)  // readers hit from the start
    put(s, key_of(i), pattern(key_of(i), 0, size_of(i)), at_sec(1));
  std::vector<std::thread> ts;
  for (int w = 0; w < kWriters; ++w) {
    ts.emplace_back([&, w] {
      std::mt19937 rng(static_cast<unsigned>(w) + 11);
      uint64_t version = static_cast<uint64_t>(w) << 40;
      while (!stop.load(std::memory_order_relaxed)) {
        const int i = static_cast<int>(rng() % (2 * kKeysEach));
        const auto now = at_sec(1);
        if (rng() % 8 == 0)
          s.remove(key_of(i), now);
        else
          put(s, key_of(i), pattern(key_of(i), ++version, size_of(i)), now);
        writes.fetch_add(1, std::memory_order_relaxed);
        uint64_t used = s.mem_used();
        uint64_t seen = max_used.load();
        while (used > seen && !max_used.compare_exchange_weak(seen, used)) {}
      }
    });
  }
  std::thread gc([&] {
    uint64_t next = 0;
    gc_stats g;
    while (!stop.load(std::memory_order_relaxed)) {
      next = s.gc_sweep(next, 32, at_sec(1), g);
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> readers;
  for (int t = 0; t < kReaders; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t) + 101);
      // The key and the "<key>#<version>#" head seen at the get: the bytes must
      // still be that version when the pin goes (not a later value in reused memory).
      struct hold {
        std::string key, head;
        item_ref ref;
      };
      std::deque<hold> held;
      get_result r;
      // Until each side did its share (bounded: the writers cannot stop the readers).
      uint64_t mine = 0;
      for (int n = 0; n < kMaxReads && (n < kReads || mine < kHits || writes.load(std::memory_order_relaxed) < kWrites);
           ++n) {
        const std::string key = key_of(static_cast<int>(rng() % (2 * kKeysEach)));
        s.get(key, at_sec(1), pinned(), r);
        if (r.status != get_status::Hit) continue;
        hits.fetch_add(1, std::memory_order_relaxed);
        ++mine;
        if (!intact(key, r.value_view())) torn.fetch_add(1);
        const std::string_view v = r.value_view();
        std::string head(v.substr(0, v.find('#', key.size() + 1) + 1));
        held.push_back({key, std::move(head), std::move(r.pinned)});
        while (held.size() > kHold || (held.size() > 0 && rng() % 4 == 0)) {
          const hold& h = held.front();
          if (!h.ref.value().starts_with(h.head) || !intact(h.key, h.ref.value())) torn.fetch_add(1);
          held.pop_front();  // the unpin: may free an item unlinked meanwhile
        }
      }
    });
  }
  for (auto& t : readers) t.join();
  stop = true;
  for (auto& t : ts) t.join();
  gc.join();
  CHECK(torn.load() == 0);
  CHECK(hits.load() >= kReaders * kHits);
  CHECK(writes.load() >= kWrites);
  CHECK(s.stats().evictions > 0);
  // Usage above the limit is at most what readers pinned after its eviction (kHold each,
  // 256 KiB at most) plus the writers' items in the making.
  CHECK(max_used.load() <= c.memory_limit + (kReaders * kHold + kWriters) * ((256 << 10) + 4096));
  // Every pin is gone: what is charged is exactly what is linked (none unlinked-and-held).
  uint64_t linked = 0;
  s.scan(0, s.bucket_count(), at_sec(1), [&](const item_view&) { ++linked; });
  CHECK(linked == s.stats().curr_items);
  for (int i = 0; i < 2 * kKeysEach; ++i) s.remove(key_of(i), at_sec(1));
  CHECK(s.mem_used() == 0);
}
