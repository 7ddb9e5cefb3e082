// cron.h: the GC sweep's schedule (a reload's period taken at once) and the
// hash table's growth between sweeps, driven on a machine of the test's own.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "cron.h"
#include "machine_run.h"

namespace ithaca::server {

namespace {

std::shared_ptr<const live_settings> with_gc_interval(uint64_t ms) {
  live_settings l;
  l.gc_interval_ms = ms;
  return std::make_shared<const live_settings>(l);
}

// Waits on the machine, polling, until `done` or `timeout_ms`; true if done.
template <class F>
bool eventually(F done, mm::millis timeout_ms) {
  const int64_t until = mm::deadline_after(timeout_ms);
  while (!done()) {
    if (mm::now_ns() >= until) return false;
    mm::sleep(5);
  }
  return true;
}

}  // namespace

TEST_CASE("a reload's short gc_interval is taken at once, not after the old period ends") {
  store::store_config sc;
  sc.bucket_count = 1024;
  store::store st(sc);
  live_cell live(with_gc_interval(3'600'000));  // an hour
  gc_counters counters;
  uint64_t runs_before = 1, runs_after = 0;
  test::in_machine([&] {
    server_clock clock;
    mm::cond reloaded;
    cron_settings s;
    s.grow = false;
    const mm::coroutine_id cron =
        mm::coroutine_create("cron", [&] { cron_main(st, clock, counters, live, reloaded, s); });
    mm::yield();
    runs_before = counters.runs.load();
    live.publish(with_gc_interval(10));
    reloaded.signal();
    eventually([&] { return counters.runs.load() >= 3; }, 10000);
    runs_after = counters.runs.load();
    mm::coroutine_finish(cron, 5000);
  });
  CHECK(runs_before == 0);  // an hour's period: nothing swept at the start
  CHECK(runs_after >= 3);   // sweeps every 10 ms since the reload
}

TEST_CASE("the table grows past 1.5 items per bucket between sweeps, and not with grow off") {
  for (const bool grow : {true, false}) {
    CAPTURE(grow);
    store::store_config sc;
    sc.bucket_count = 1024;
    store::store st(sc);
    const unsigned start_power = st.table_now().power;
    store::store_result r;
    for (int i = 0; i < 4000; ++i) {
      const std::string key = "key:" + std::to_string(i);
      st.set(key, store::store_mode::Set, {"v", 1}, 0, 0, store::store_now{1000, 1'700'000'000}, {}, r);
    }
    live_cell live(with_gc_interval(10));
    gc_counters counters;
    unsigned power = 0;
    test::in_machine([&] {
      server_clock clock;
      mm::cond reloaded;
      cron_settings s;
      s.grow = grow;
      s.buckets_per_step = 64;
      const mm::coroutine_id cron =
          mm::coroutine_create("cron", [&] { cron_main(st, clock, counters, live, reloaded, s); });
      // Three sweeps: each ends with a growth to completion (with grow on).
      eventually([&] { return counters.runs.load() >= 3; }, 10000);
      power = st.table_now().power;
      mm::coroutine_finish(cron, 5000);
    });
    CHECK(counters.runs.load() >= 3);
    if (grow) {
      CHECK(power >= start_power + 1);
      CHECK(4000 <= 3 * (uint64_t{1} << power) / 2);  // at most 1.5 items per bucket now
    } else {
      CHECK(power == start_power);
    }
  }
}

}  // namespace ithaca::server
