// Many threads on few keys, with a concurrent GC: checks invariants, not timings.
#include <doctest/doctest.h>

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "helpers.h"

using namespace ithaca::store;
using namespace ithaca::store::test;

namespace {

constexpr int kThreads = 4;
constexpr int kKeys = 2000;
constexpr int kCounters = 8;

struct stress_outcome {
  uint64_t increments = 0;
  uint64_t bad_values = 0;
};

void worker(store& s, int id, int ops, stress_outcome& out) {
  std::mt19937_64 rng(static_cast<uint64_t>(id) * 7919 + 1);
  get_result r;
  std::string v;
  for (int i = 0; i < ops; ++i) {
    const store_now now = at_sec(1 + static_cast<uint64_t>(i) / 10000);
    const std::string key = key_n("key", static_cast<long>(rng() % kKeys));
    v = key;
    v += ':';
    v.append(rng() % 64, 'x');
    const int op = static_cast<int>(rng() % 100);
    if (op < 35) {
      s.get(key, now, {}, r);
      if (r.status == get_status::Hit) {
        std::string val = r.large ? std::string() : r.value;
        if (r.large) r.large.read_all(val);
        if (!val.empty() && val.rfind(key + ":", 0) != 0) ++out.bad_values;
      }
    } else if (op < 55) {
      put(s, key, v, now, rng() % 4 == 0 ? 2 : 0);
    } else if (op < 60) {
      put(s, key, v, now, 0, 0, store_mode::Add);
    } else if (op < 64) {
      put(s, key, v, now, 0, 0, store_mode::Replace);
    } else if (op < 68) {
      put(s, key, "y", now, 0, 0, store_mode::Append);
    } else if (op < 76) {
      s.remove(key, now);
    } else if (op < 84) {
      arith_options o;
      o.vivify = true;
      o.initial = 0;
      arith_result ar;
      // Counters are incremented only, never removed: their sum is checked at the end.
      s.arithmetic(key_n("counter", static_cast<long>(rng() % kCounters)), arith_op::Incr, 1, now, o, ar);
      // A vivified counter starts at 0 without the increment (ma N semantics).
      if (ar.status == arith_status::Ok && !ar.vivified) ++out.increments;
    } else if (op < 88) {
      s.touch(key, 0, now);
    } else if (op < 94) {
      s.get(key, now, {}, r);
      if (r.status == get_status::Hit) {
        store_options o;
        o.compare_cas = r.cas;
        put(s, key, v, now, 0, 0, store_mode::Cas, o);
      }
    } else {
      get_options o;
      o.lease = true;
      s.get(key, now, o, r);
      if (r.status == get_status::LeaseToken) {
        store_options so;
        so.lease_token = r.lease_token;
        put(s, key, v, now, 0, 0, store_mode::Set, so);
      }
    }
  }
}

void run_stress(const store_config& c, int ops_per_thread, bool check_counters) {
  store s(c);
  std::atomic<bool> done{false};
  std::vector<stress_outcome> outs(kThreads);
  std::thread gc([&] {
    uint64_t next = 0;
    gc_stats g;
    uint64_t sec = 1;
    while (!done.load()) {
      next = s.gc_sweep(next, 64, at_sec(sec), g);
      if (next == 0) ++sec;
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back(worker, std::ref(s), t, ops_per_thread, std::ref(outs[static_cast<size_t>(t)]));
  for (auto& t : ts) t.join();
  done = true;
  gc.join();

  uint64_t bad = 0, increments = 0;
  for (auto& o : outs) {
    bad += o.bad_values;
    increments += o.increments;
  }
  CHECK(bad == 0);
  if (c.memory_limit < (uint64_t{64} << 20)) {
    CHECK(s.mem_used() <= c.memory_limit + 64 * 1024);  // a few concurrent in-flight items
    CHECK(s.stats().evictions > 0);
  }

  // Reclaim expired items and placeholders, then the counts must agree with a scan.
  const store_now late = at_sec(100000);
  gc_stats g;
  s.gc_sweep(0, s.bucket_count(), late, g);
  uint64_t seen = 0, counter_sum = 0;
  std::vector<std::string> keys;
  s.scan(0, s.bucket_count(), late, [&](const item_view& v) {
    ++seen;
    keys.emplace_back(v.key);
    if (v.key.starts_with("counter")) counter_sum += std::stoull(std::string(v.value));
  });
  CHECK(s.stats().curr_items == seen);
  CHECK(s.stats().lease_placeholders == 0);
  if (check_counters) CHECK(counter_sum == increments);
  for (auto& k : keys) CHECK(s.remove(k, late) == remove_status::Deleted);
  CHECK(s.stats().curr_items == 0);
  CHECK(s.mem_used() == 0);
}

}  // namespace

TEST_CASE("stress: 4 threads, 200k mixed ops, concurrent GC") {
  store_config c;
  c.bucket_count = 1024;
  run_stress(c, 50000, true);
}

TEST_CASE("stress: 4 threads, 80k mixed ops, tight memory limit, large values") {
  char tmpl[] = "/tmp/ithaca-store-stress-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  store_config c;
  c.bucket_count = 256;
  c.memory_limit = 64 * 1024;  // well under the ~150 KiB the key set needs
  // Values over 64 bytes (about one store in eight) go to files; temp files on a real disk
  // cost about a millisecond each, so fewer ops here.
  c.large_value_threshold = 64;
  c.temp_dir = tmpl;
  run_stress(c, 20000, false);
  CHECK(rmdir(tmpl) == 0);  // empty: every temp file was unlinked at once
}

// store::prefetch reads bucket heads without their locks while other threads
// link, unlink and free items: it must only ever prefetch what it reads, never
// follow it (under ASan a dereference of a freed item is reported). The
// stores and deletes around it still see every value whole.
TEST_CASE("prefetch races stores and deletes harmlessly") {
  store_config c = small_config();
  c.bucket_count = 64;  // long chains: heads change under the prefetching reader
  store s(c);
  std::atomic<bool> stop{false};
  std::vector<std::string> keys;
  for (int i = 0; i < 256; ++i) keys.push_back(key_n("pf", i));
  std::thread writer([&] {
    std::mt19937_64 rng(11);
    for (int i = 0; i < 200000 && !stop.load(); ++i) {
      const std::string& k = keys[rng() % keys.size()];
      if (rng() % 2)
        put(s, k, k, at_sec(1));
      else
        s.remove(k, at_sec(1));
    }
    stop.store(true);
  });
  std::vector<std::string_view> views(keys.begin(), keys.end());
  uint64_t rounds = 0, bad = 0;
  while (!stop.load()) {
    for (size_t i = 0; i + 16 <= views.size(); i += 16) {
      s.prefetch(std::span<const std::string_view>(views.data() + i, 16));
      const std::string v = fetch(s, views[i], at_sec(1));
      if (v != "<miss>" && v != views[i]) ++bad;
    }
    ++rounds;
  }
  writer.join();
  CHECK(rounds > 0);
  CHECK(bad == 0);
  // Keys no bucket holds, and more keys than one call takes, are fine too.
  std::vector<std::string_view> many(100, "absent");
  s.prefetch(many);
  s.prefetch({});
  CHECK(fetch(s, "absent", at_sec(1)) == "<miss>");
}
