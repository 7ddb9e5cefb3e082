// Test helpers: run a function as the main coroutine of a fresh machine on the
// backend named by MM_BACKEND (meson runs every test once per backend).
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "machinarium.h"

namespace mm_test {

inline mm::backend_kind backend_from_env() {
  const char* b = std::getenv("MM_BACKEND");
  if (!b) return mm::backend_kind::Auto;
  std::string s(b);
  if (s == "epoll") return mm::backend_kind::Epoll;
  if (s == "io_uring") return mm::backend_kind::IoUring;
  return mm::backend_kind::Auto;
}

inline mm::machine_config config(std::string name) {
  mm::machine_config cfg;
  cfg.name = std::move(name);
  cfg.backend = backend_from_env();
  // MM_URING_MULTISHOT_RECV=0: io_uring reads with recv + POLL_ADD, as on a
  // kernel without multishot recv (meson runs the suite that way too).
  const char* ms = std::getenv("MM_URING_MULTISHOT_RECV");
  if (ms && std::string(ms) == "0") cfg.uring_multishot_recv = false;
  return cfg;
}

// Starts a machine whose main coroutine runs `fn`; returns it (not joined).
inline mm::machine* start(std::string name, std::function<void()> fn) {
  mm::machine* m = mm::machine_create(config(std::move(name)), std::move(fn));
  REQUIRE(m != nullptr);
  return m;
}

// Runs `fn` on a new machine and returns when it and every coroutine it
// spawned have ended (the machine stops itself after `fn`).
inline void run(std::function<void()> fn) {
  mm::machine* m = start("test", [fn] {
    fn();
    mm::machine_stop(mm::machine_self());
  });
  mm::machine_join(m);
}

inline int64_t elapsed_ms(int64_t start_ns) { return (mm::now_ns() - start_ns) / 1000000; }

}  // namespace mm_test
