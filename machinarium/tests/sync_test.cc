#include "harness.h"

using namespace mm_test;

TEST_CASE("call_wait_times_out") {
  run([] {
    mm::call k;
    CHECK(k.wait(5) == mm::wait_status::TimedOut);
    CHECK_FALSE(k.waiting());
  });
}

TEST_CASE("call_wake_resumes_the_waiter_with_ok") {
  run([] {
    mm::call k;
    mm::coroutine_create("waker", [&] { k.wake(); });
    CHECK(k.wait(1000) == mm::wait_status::Ok);
  });
}

TEST_CASE("cond_remembers_a_signal_nobody_waited_for") {
  run([] {
    mm::cond c;
    c.signal();
    CHECK(c.wait(0) == mm::wait_status::Ok);
    CHECK(c.wait(5) == mm::wait_status::TimedOut);
  });
}

TEST_CASE("cond_broadcast_wakes_every_waiter") {
  run([] {
    mm::cond c;
    int woken = 0;
    std::vector<mm::coroutine_id> ids;
    for (int i = 0; i < 5; i++)
      ids.push_back(mm::coroutine_create("w", [&] { woken += c.wait(1000) == mm::wait_status::Ok; }));
    mm::yield();
    c.broadcast();
    for (auto id : ids) mm::coroutine_join(id, 1000);
    CHECK(woken == 5);
  });
}

TEST_CASE("wait_group_waits_for_all") {
  run([] {
    mm::wait_group wg;
    int done = 0;
    for (int i = 0; i < 10; i++) {
      wg.add();
      mm::coroutine_create("w", [&, i] {
        mm::sleep(i);
        done++;
        wg.done();
      });
    }
    CHECK(wg.wait(2000) == mm::wait_status::Ok);
    CHECK(done == 10);
  });
}

TEST_CASE("wait_group_times_out") {
  run([] {
    mm::wait_group wg;
    wg.add();
    CHECK(wg.wait(10) == mm::wait_status::TimedOut);
  });
}
