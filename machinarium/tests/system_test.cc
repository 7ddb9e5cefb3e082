#include <signal.h>
#include <unistd.h>

#include <thread>

#include "harness.h"

using namespace mm_test;

TEST_CASE("a_signal_is_delivered_to_the_waiting_machine") {
  run([] {
    std::thread sender([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      kill(getpid(), SIGUSR1);
    });
    int sig = mm::signal_wait(5000);
    sender.join();
    CHECK(sig == SIGUSR1);
    CHECK(mm::signal_wait(10) == -ETIMEDOUT);
  });
}

TEST_CASE("a_blocking_call_is_offloaded_and_the_machine_keeps_running") {
  run([] {
    int ticks = 0;
    bool stop = false;
    auto ticker = mm::coroutine_create("ticker", [&] {
      while (!stop) {
        mm::sleep(1);
        ticks++;
      }
    });
    auto done = std::make_shared<std::atomic<bool>>(false);
    mm::wait_status s = mm::blocking_call(
        [done] {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          *done = true;
        },
        2000);
    stop = true;
    mm::coroutine_join(ticker, 1000);
    CHECK(s == mm::wait_status::Ok);
    CHECK(*done);
    CHECK(ticks >= 10);  // the machine ran other coroutines meanwhile
  });
}

TEST_CASE("a_blocking_call_times_out_but_finishes_safely") {
  run([] {
    auto finished = std::make_shared<std::atomic<bool>>(false);
    mm::wait_status s = mm::blocking_call(
        [finished] {
          std::this_thread::sleep_for(std::chrono::milliseconds(60));
          *finished = true;
        },
        5);
    CHECK(s == mm::wait_status::TimedOut);
    mm::sleep(100);  // its late wake must be ignored, not misdelivered
    CHECK(*finished);
    CHECK(mm::sleep(5) == mm::wait_status::TimedOut);
  });
}

TEST_CASE("resolve_localhost") {
  run([] {
    mm::address a;
    std::string err;
    CHECK_MESSAGE(mm::resolve("localhost", "11211", a, 5000, &err), err);
    CHECK(a.to_string().find("11211") != std::string::npos);
  });
}
