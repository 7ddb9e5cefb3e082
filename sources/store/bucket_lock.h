// bucket_lock: the one-byte spin lock that guards one hash bucket.
//
// There are millions of buckets, so the lock must be tiny (a std::mutex is 40 bytes).
// Holders keep it for a few hundred nanoseconds at most: they never do I/O, never allocate
// on purpose, never suspend a coroutine and never take a second bucket lock. So a waiter
// spins briefly, then yields its pthread to the kernel (another machine's thread may be
// the holder, preempted), and never sleeps on a futex.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

#include <sched.h>

namespace ithaca::store {

class bucket_lock {
 public:
  void lock() noexcept {
    for (;;) {
      if (!word().exchange(1, std::memory_order_acquire)) return;
      // Test-and-test-and-set: spin on a plain load so waiters do not bounce the line.
      for (int spins = 0; word().load(std::memory_order_relaxed); ++spins) {
        if (spins < kSpinsBeforeYield)
          cpu_relax();
        else
          sched_yield();
      }
    }
  }

  bool try_lock() noexcept { return !word().exchange(1, std::memory_order_acquire); }

  void unlock() noexcept { word().store(0, std::memory_order_release); }

 private:
  static constexpr int kSpinsBeforeYield = 128;

  static void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  std::atomic_ref<uint8_t> word() noexcept { return std::atomic_ref<uint8_t>(word_); }

  // A plain byte, only ever reached through atomic_ref: so the lock is a
  // trivial type, and a table of them may come zeroed (unlocked) from
  // calloc without being written (store.cc: untouched pages cost nothing).
  uint8_t word_;
};

static_assert(sizeof(bucket_lock) == 1);
static_assert(std::is_trivial_v<bucket_lock>);

// Scoped holder; unlocks on destruction. Declare any reclaim_list *before* the guard so that
// deferred frees run after the unlock.
class bucket_guard {
 public:
  explicit bucket_guard(bucket_lock& l) noexcept : lock_(l) { lock_.lock(); }
  ~bucket_guard() { lock_.unlock(); }
  bucket_guard(const bucket_guard&) = delete;
  bucket_guard& operator=(const bucket_guard&) = delete;

 private:
  bucket_lock& lock_;
};

}  // namespace ithaca::store
