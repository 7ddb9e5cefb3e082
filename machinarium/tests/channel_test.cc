#include <thread>

#include "harness.h"

using namespace mm_test;

TEST_CASE("channel_keeps_order_across_machines") {
  constexpr int kCount = 100000;
  mm::channel<int> ch(64);
  std::vector<int> got;
  mm::machine* reader = start("reader", [&] {
    for (int i = 0; i < kCount; i++) {
      int v = -1;
      REQUIRE(ch.read(v, 5000) == mm::wait_status::Ok);
      got.push_back(v);
    }
  });
  mm::machine* writer = start("writer", [&] {
    for (int i = 0; i < kCount; i++) REQUIRE(ch.write(i, 5000) == mm::wait_status::Ok);
  });
  // Stop each once its main coroutine is done: poll the counters.
  for (mm::machine* m : {reader, writer}) {
    while (mm::machine_counters_get(m).coroutines_alive > 0) std::this_thread::yield();
    mm::machine_stop(m);
    mm::machine_join(m);
  }
  REQUIRE(got.size() == kCount);
  bool ordered = true;
  for (int i = 0; i < kCount; i++) ordered &= got[i] == i;
  CHECK(ordered);
}

TEST_CASE("channel_honours_its_bound") {
  run([] {
    mm::channel<int> ch(3);
    CHECK(ch.try_write(1));
    CHECK(ch.try_write(2));
    CHECK(ch.try_write(3));
    CHECK_FALSE(ch.try_write(4));                         // refused at once: the caller counts a drop
    CHECK(ch.write(4, 10) == mm::wait_status::TimedOut);  // waited for room
    CHECK(ch.size() == 3);
    // A reader makes room; a blocked writer then gets in.
    mm::coroutine_id w = mm::coroutine_create("writer", [&] { CHECK(ch.write(5, 1000) == mm::wait_status::Ok); });
    mm::yield();
    int v = 0;
    CHECK(ch.read(v, 0) == mm::wait_status::Ok);
    CHECK(v == 1);
    mm::coroutine_join(w, 1000);
    CHECK(ch.size() == 3);
    std::vector<int> rest;
    while (ch.try_read(v)) rest.push_back(v);
    CHECK(rest == std::vector<int>{2, 3, 5});
  });
}

TEST_CASE("channel_read_times_out_and_is_cancelled") {
  run([] {
    mm::channel<int> ch(1);
    int v;
    CHECK(ch.read(v, 5) == mm::wait_status::TimedOut);
    mm::wait_status seen = mm::wait_status::Ok;
    auto id = mm::coroutine_create("reader", [&] { seen = ch.read(v, mm::kForever); });
    mm::yield();
    mm::coroutine_cancel(id);
    mm::coroutine_join(id, 1000);
    CHECK(seen == mm::wait_status::Cancelled);
  });
}

TEST_CASE("ping_pong_between_two_machines") {
  constexpr int kRounds = 20000;
  mm::channel<int> ping(1), pong(1);
  std::atomic<int> last{0};
  mm::machine* a = start("ping", [&] {
    for (int i = 0; i < kRounds; i++) {
      REQUIRE(ping.write(i, 5000) == mm::wait_status::Ok);
      int v = 0;
      REQUIRE(pong.read(v, 5000) == mm::wait_status::Ok);
      REQUIRE(v == i + 1);
      last = v;
    }
  });
  mm::machine* b = start("pong", [&] {
    for (int i = 0; i < kRounds; i++) {
      int v = 0;
      REQUIRE(ping.read(v, 5000) == mm::wait_status::Ok);
      REQUIRE(pong.write(v + 1, 5000) == mm::wait_status::Ok);
    }
  });
  for (mm::machine* m : {a, b}) {
    while (mm::machine_counters_get(m).coroutines_alive > 0) std::this_thread::yield();
    mm::machine_stop(m);
    mm::machine_join(m);
  }
  CHECK(last == kRounds);
}

TEST_CASE("machine_spawn_runs_a_coroutine_on_another_machine") {
  std::atomic<bool> ran{false};
  std::atomic<bool> on_target{false};
  mm::machine* target = start("target", [] { mm::sleep(mm::kForever); });
  mm::machine_spawn(target, "spawned", [&] {
    on_target = std::string(mm::machine_name(mm::machine_self())) == "target";
    ran = true;
  });
  while (!ran) std::this_thread::yield();
  mm::machine_stop(target);
  mm::machine_join(target);
  CHECK(on_target);
}
