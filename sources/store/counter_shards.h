// counter_shards: event counters and gauges written on the request path, one shard per
// thread, summed by the (rare) readers: `stats`, the metrics page, the tests.
//
// Why: a get bumped three shared counters and a set ten (hits, items, per-class number,
// bytes requested and chunks, for the new item and the one it replaced), each a locked
// read-modify-write: together 10 ns of a pipelined get's 120 ns of own CPU and 43 ns of a
// binary set's 155 (scripts/bench/request_path). memcached keeps such counters per worker
// thread too.
//
// Shards: the first kOwned threads of the process that count get a shard each, for good
// (a thread_local index, never handed back). Only its thread writes an owned shard, so an
// update is a relaxed load and store, no locked instruction. Every later thread (a test's
// hundredth, a short-lived helper) writes the last shard, which is shared and updated with
// fetch_add. A reader sums the shards with relaxed loads; std::atomic_ref on every access
// keeps writer and reader free of torn values. A gauge (+1 on link, -1 on unlink, possibly
// on two threads) may be negative in one shard; its sum is right once writers are done, and
// a reader racing them clamps at 0.
//
// The memory is calloc'd, one shard per cache line run: a store that counts nothing costs no
// touched pages (a router; the fuzz target's many stores), and no two shards share a line.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace ithaca::store {

// Which shard this thread writes: its own (owned) or the shared one.
struct thread_shard {
  unsigned index;
  bool owned;
};

class counter_shards {
 public:
  static constexpr unsigned kOwned = 32;           // threads with a shard of their own
  static constexpr unsigned kShards = kOwned + 1;  // and the shared one, last

  explicit counter_shards(size_t cells_per_shard);

  void add(size_t cell, int64_t n) noexcept {
    const thread_shard me = this_thread_shard();
    std::atomic_ref<int64_t> c(cells_[me.index * stride_ + cell]);
    if (me.owned)
      c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    else
      c.fetch_add(n, std::memory_order_relaxed);
  }

  // The sum over all shards (relaxed: a figure for a report, not a synchronization).
  int64_t sum(size_t cell) const noexcept;

  static thread_shard this_thread_shard() noexcept {
    thread_local const thread_shard mine = take_shard();
    return mine;
  }

 private:
  struct free_deleter {
    void operator()(void* p) const noexcept { std::free(p); }
  };
  static thread_shard take_shard() noexcept;

  size_t stride_;                            // cells per shard, rounded up to whole lines
  std::unique_ptr<void, free_deleter> raw_;  // the calloc'd block
  int64_t* cells_ = nullptr;                 // kShards * stride_ in raw_, 64-aligned
};

}  // namespace ithaca::store
