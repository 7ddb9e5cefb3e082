#include "small_fifo.h"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace ithaca::store {

small_fifo::small_fifo(size_t capacity)
    : per_shard_(static_cast<uint32_t>(std::clamp<size_t>(capacity / kShards, 1, size_t{1} << 28))),
      shards_(new shard[kShards]) {
  for (unsigned s = 0; s < kShards; ++s) {
    shards_[s].lock.unlock();
    shards_[s].ring = static_cast<entry*>(std::calloc(per_shard_, sizeof(entry)));
    if (!shards_[s].ring) {
      for (unsigned k = 0; k < s; ++k) std::free(shards_[k].ring);
      throw std::bad_alloc();
    }
  }
}

small_fifo::~small_fifo() {
  for (unsigned s = 0; s < kShards; ++s) std::free(shards_[s].ring);
}

// The shard from high bits of the hash: the low ones pick the key's bucket.
bool small_fifo::push(const entry& e, entry& evicted) noexcept {
  shard& sh = shards_[(e.hash >> 48) % kShards];
  bool full = false;
  bucket_guard guard(sh.lock);
  uint32_t n = sh.count.load(std::memory_order_relaxed);
  if (n == per_shard_) {
    evicted = sh.ring[sh.head];
    sh.head = sh.head + 1 == per_shard_ ? 0 : sh.head + 1;
    --n;
    full = true;
  }
  uint32_t slot = sh.head + n;
  if (slot >= per_shard_) slot -= per_shard_;
  sh.ring[slot] = e;
  sh.count.store(n + 1, std::memory_order_relaxed);
  return full;
}

bool small_fifo::pop(entry& out) noexcept {
  const uint32_t start = pop_cursor_.fetch_add(1, std::memory_order_relaxed);
  for (unsigned k = 0; k < kShards; ++k) {
    shard& sh = shards_[(start + k) % kShards];
    if (sh.count.load(std::memory_order_relaxed) == 0) continue;  // a hint; checked again under the lock
    bucket_guard guard(sh.lock);
    const uint32_t n = sh.count.load(std::memory_order_relaxed);
    if (n == 0) continue;
    out = sh.ring[sh.head];
    sh.head = sh.head + 1 == per_shard_ ? 0 : sh.head + 1;
    sh.count.store(n - 1, std::memory_order_relaxed);
    return true;
  }
  return false;
}

size_t small_fifo::size() const noexcept {
  size_t n = 0;
  for (unsigned s = 0; s < kShards; ++s) n += shards_[s].count.load(std::memory_order_relaxed);
  return n;
}

}  // namespace ithaca::store
