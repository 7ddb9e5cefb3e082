// One machinarium machine for the whole fuzz process, to run each input on.
//
// The request path reads large values (the store's arena file) through
// mm::blocking_call, which only a coroutine can make. Starting a machine per
// input would cost a thread and a kernel backend per execution, so the first
// input starts one (epoll: nothing here needs io_uring, and its set-up would
// be paid once per process anyway) and every input runs as one coroutine on
// it while the fuzzer's thread waits. The machine is never stopped: it lives
// as long as the process, like the arena file the target keeps.
//
// Threads: run_on_machine is called from the fuzzer's thread, one input at a
// time; `fn` runs on the machine thread. A FUZZ_CHECK failing there aborts
// the process as it would on the fuzzer's thread (libFuzzer saves the input).
// Lock: the local mutex, held only to hand the "done" flag over.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>

#include "config.h"
#include "machinarium.h"

namespace ithaca::fuzz {

inline void run_on_machine(std::function<void()> fn) {
  static mm::machine* machine = [] {
    mm::machine_config mc;
    mc.name = "fuzz";
    mc.backend = mm::backend_kind::Epoll;
    // The server's default stack: a request path that overflows it is a finding.
    mc.stack_size = config::server_config{}.stack_size;
    mm::machine* m = mm::machine_create(mc, [] {});
    if (!m) {
      std::fprintf(stderr, "fuzz: cannot start a machine\n");
      std::abort();
    }
    return m;
  }();
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;  // [mutex]
  mm::machine_spawn(machine, "fuzz_input", [&] {
    try {
      fn();
    } catch (...) {
      // No exception may leave the request path (STYLE.md: none on the data path).
      std::fprintf(stderr, "fuzz: an exception left the request path\n");
      std::abort();
    }
    std::lock_guard lock(mutex);
    done = true;
    cv.notify_one();
  });
  // libFuzzer's -timeout (10 s in scripts/fuzz) reports a slow input first;
  // this bound is for the replay builds, which have no such watchdog.
  constexpr auto kInputLimit = std::chrono::seconds(60);
  std::unique_lock lock(mutex);
  if (!cv.wait_for(lock, kInputLimit, [&] { return done; })) {
    std::fprintf(stderr, "fuzz: an input ran for more than 60 s on the machine\n");
    std::abort();
  }
}

}  // namespace ithaca::fuzz
