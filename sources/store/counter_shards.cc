#include "counter_shards.h"

#include <new>

namespace ithaca::store {

namespace {

// Threads that have counted so far, process-wide (every store's shards are indexed alike).
std::atomic<unsigned> g_threads{0};

}  // namespace

thread_shard counter_shards::take_shard() noexcept {
  const unsigned n = g_threads.fetch_add(1, std::memory_order_relaxed);
  return n < kOwned ? thread_shard{n, true} : thread_shard{kOwned, false};
}

counter_shards::counter_shards(size_t cells_per_shard)
    : stride_((cells_per_shard * sizeof(int64_t) + 63) / 64 * 64 / sizeof(int64_t)) {
  // One line extra so the shards can start on a cache-line boundary.
  void* p = std::calloc(kShards * stride_ + 64 / sizeof(int64_t), sizeof(int64_t));
  if (!p) throw std::bad_alloc();
  raw_.reset(p);
  const auto addr = reinterpret_cast<uintptr_t>(p);
  cells_ = reinterpret_cast<int64_t*>((addr + 63) & ~uintptr_t{63});
}

int64_t counter_shards::sum(size_t cell) const noexcept {
  int64_t total = 0;
  for (unsigned sh = 0; sh < kShards; ++sh)
    total += std::atomic_ref<int64_t>(cells_[sh * stride_ + cell]).load(std::memory_order_relaxed);
  return total;
}

}  // namespace ithaca::store
