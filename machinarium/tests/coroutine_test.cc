#include <random>
#include <stdexcept>
#include <vector>

#include "harness.h"

using namespace mm_test;

TEST_CASE("machine_runs_main_and_reports_backend") {
  std::string backend;
  run([&] { backend = mm::machine_backend_name(mm::machine_self()); });
  const char* want = std::getenv("MM_BACKEND");
  if (want && std::string(want) != "auto") CHECK(backend == want);
}

TEST_CASE("sleep_times_out_after_its_duration") {
  run([] {
    int64_t start = mm::now_ns();
    CHECK(mm::sleep(30) == mm::wait_status::TimedOut);
    CHECK(elapsed_ms(start) >= 29);
  });
}

TEST_CASE("cancel_wakes_a_waiter") {
  run([] {
    mm::wait_status seen = mm::wait_status::Ok;
    mm::cond never;
    mm::coroutine_id id = mm::coroutine_create("waiter", [&] { seen = never.wait(mm::kForever); });
    mm::yield();  // let it start waiting
    mm::coroutine_cancel(id);
    CHECK(mm::coroutine_join(id, 1000) == mm::wait_status::Ok);
    CHECK(seen == mm::wait_status::Cancelled);
  });
}

TEST_CASE("cancellation_is_sticky") {
  run([] {
    std::vector<mm::wait_status> seen;
    mm::coroutine_id id = mm::coroutine_create("sticky", [&] {
      seen.push_back(mm::sleep(mm::kForever));
      seen.push_back(mm::sleep(10));
      seen.push_back(mm::sleep(0));
    });
    mm::yield();
    mm::coroutine_cancel(id);
    CHECK(mm::coroutine_join(id, 1000) == mm::wait_status::Ok);
    REQUIRE(seen.size() == 3);
    for (auto s : seen) CHECK(s == mm::wait_status::Cancelled);
  });
}

TEST_CASE("join_times_out_while_the_target_runs") {
  run([] {
    mm::coroutine_id id = mm::coroutine_create("slow", [] { mm::sleep(200); });
    CHECK(mm::coroutine_join(id, 20) == mm::wait_status::TimedOut);
    mm::coroutine_cancel(id);
    CHECK(mm::coroutine_join(id, 1000) == mm::wait_status::Ok);
  });
}

TEST_CASE("a_cancelled_parent_finishes_its_child_before_it_returns") {
  run([] {
    // The child waits on the parent's stack; the parent, cancelled, must not
    // return (and free that stack) before the child has left the wait.
    bool child_done = false;
    bool done_when_parent_returned = false;
    mm::wait_status parent_join = mm::wait_status::Ok;
    mm::coroutine_id parent = mm::coroutine_create("parent", [&] {
      mm::cond on_parent_stack;
      mm::coroutine_id child = mm::coroutine_create("child", [&] {
        on_parent_stack.wait(mm::kForever);
        mm::sleep(5);  // cancelled: returns at once
        child_done = true;
      });
      mm::sleep(mm::kForever);                        // until cancelled
      parent_join = mm::coroutine_join(child, 1000);  // a cancelled caller: at once
      CHECK(mm::coroutine_finish(child, 1000));
      done_when_parent_returned = child_done;
    });
    mm::yield();
    mm::coroutine_cancel(parent);
    CHECK(mm::coroutine_join(parent, 2000) == mm::wait_status::Ok);
    CHECK(parent_join == mm::wait_status::Cancelled);
    CHECK(done_when_parent_returned);
  });
}

TEST_CASE("finish_gives_up_after_its_timeout") {
  run([] {
    // A coroutine that ignores cancellation (busy in yields) outlives the timeout.
    bool stop = false;
    mm::coroutine_id id = mm::coroutine_create("stubborn", [&] {
      while (!stop) mm::yield();
    });
    CHECK_FALSE(mm::coroutine_finish(id, 20));
    stop = true;
    CHECK(mm::coroutine_finish(id, 1000));
  });
}

TEST_CASE("an_exception_ends_only_its_coroutine") {
  run([] {
    bool other_finished = false;
    mm::coroutine_id bad = mm::coroutine_create("thrower", [] {
      mm::yield();
      throw std::runtime_error("boom (expected by the test)");
    });
    mm::coroutine_id good = mm::coroutine_create("survivor", [&] {
      mm::sleep(20);
      other_finished = true;
    });
    CHECK(mm::coroutine_join(bad, 1000) == mm::wait_status::Ok);
    CHECK(mm::coroutine_join(good, 1000) == mm::wait_status::Ok);
    CHECK(other_finished);
  });
}

TEST_CASE("ten_thousand_coroutines_on_one_machine") {
  run([] {
    constexpr int kCount = 10000;
    int finished = 0;
    mm::wait_group wg;
    std::mt19937 rng(7);
    for (int i = 0; i < kCount; i++) {
      wg.add();
      int delay = static_cast<int>(rng() % 20);
      mm::coroutine_create("sleeper", [&, delay] {
        mm::sleep(delay);
        finished++;
        wg.done();
      });
    }
    mm::yield();
    auto counters = mm::machine_counters_get(mm::machine_self());
    CHECK(counters.coroutines_alive >= kCount);
    CHECK(wg.wait(10000) == mm::wait_status::Ok);
    CHECK(finished == kCount);
  });
}

TEST_CASE("tens_of_thousands_of_timers_fire_in_deadline_order_and_cancel") {
  run([] {
    constexpr int kCount = 20000;
    std::vector<mm::coroutine_id> ids;
    std::vector<int64_t> fired;  // the deadlines, in the order they fired
    std::mt19937 rng(11);
    // Deadlines from one base three seconds ahead: creating 20,000
    // coroutines on a loaded machine took longer than one (a compile and a
    // JVM beside it), and no timer may fire before all are armed and half
    // cancelled.
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const int64_t base = ts.tv_sec * 1000000000LL + ts.tv_nsec + 3000 * 1000000LL;
    for (int i = 0; i < kCount; i++) {
      const int64_t deadline = base + static_cast<int64_t>(rng() % 50) * 1000000LL;
      ids.push_back(mm::coroutine_create("timer", [&fired, deadline] {
        mm::call k;
        if (k.wait_until(deadline) == mm::wait_status::TimedOut) fired.push_back(deadline);
      }));
    }
    mm::yield();
    CHECK(mm::machine_counters_get(mm::machine_self()).timers_pending >= kCount);
    for (int i = 0; i < kCount; i += 2) mm::coroutine_cancel(ids[i]);
    for (auto id : ids) mm::coroutine_join(id, 5000);
    CHECK(fired.size() == kCount / 2);
    // Timers fire in deadline order.
    int out_of_order = 0;
    for (size_t i = 1; i < fired.size(); i++) out_of_order += fired[i] < fired[i - 1];
    CHECK(out_of_order == 0);
  });
}

TEST_CASE("stacks_are_cached_and_reused") {
  run([] {
    for (int round = 0; round < 3; round++) {
      std::vector<mm::coroutine_id> ids;
      for (int i = 0; i < 100; i++) ids.push_back(mm::coroutine_create("short", [] { mm::yield(); }));
      for (auto id : ids) mm::coroutine_join(id, 1000);
    }
    auto c = mm::machine_counters_get(mm::machine_self());
    CHECK(c.stacks_cached >= 100);
    CHECK(c.coroutines_created >= 301);
  });
}

TEST_CASE("the_ready_queue_length_is_seen_while_coroutines_keep_yielding") {
  run([] {
    constexpr int kCount = 200;
    bool stop = false;
    std::vector<mm::coroutine_id> ids;
    for (int i = 0; i < kCount; i++) {
      ids.push_back(mm::coroutine_create("spinner", [&stop] {
        while (!stop) mm::yield();
      }));
    }
    uint64_t seen = 0;
    for (int i = 0; i < 10000 && seen == 0; i++) {
      mm::yield();
      seen = mm::machine_counters_get(mm::machine_self()).ready_queue;
    }
    CHECK(seen > 0);
    CHECK(seen <= kCount + 1);
    stop = true;
    for (auto id : ids) mm::coroutine_join(id, 1000);
    mm::sleep(1);
    mm::sleep(1);
    // Idle again: nothing left ready when the loop last went to the backend.
    CHECK(mm::machine_counters_get(mm::machine_self()).ready_queue == 0);
  });
}
