#include "ghost_set.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <new>

namespace ithaca::store {

ghost_set::ghost_set(size_t capacity) {
  const uint64_t sets = std::bit_ceil(std::max<uint64_t>(capacity / kWays, 1));
  mask_ = sets - 1;
  epoch_len_ = std::max<uint64_t>(sets * kWays / kEpochs, 1);
  slots_ = static_cast<uint32_t*>(std::calloc(sets * kWays, sizeof(uint32_t)));
  if (!slots_) throw std::bad_alloc();
}

ghost_set::~ghost_set() { std::free(slots_); }

// The store's hash picks its bucket with its low bits and the small queue's shard with
// bits 48..51: mixed, so the set and fingerprint depend on all of it.
namespace {
uint64_t ghost_mix(uint64_t h) noexcept {
  h ^= h >> 31;
  h *= 0x9e3779b97f4a7c15ULL;
  h ^= h >> 29;
  return h;
}
}  // namespace

uint32_t ghost_set::fingerprint(uint64_t hash) noexcept {
  const uint32_t fp = static_cast<uint32_t>(ghost_mix(hash) >> 40) << 8;
  return fp ? fp : 1u << 8;  // entry 0 is an empty slot
}

uint32_t* ghost_set::set_of(uint64_t hash) const noexcept { return &slots_[(ghost_mix(hash) & mask_) * kWays]; }

uint32_t ghost_set::epoch_now() const noexcept {
  return static_cast<uint32_t>(inserts_.load(std::memory_order_relaxed) / epoch_len_) & 0xFF;
}

void ghost_set::insert(uint64_t hash) noexcept {
  const uint32_t epoch = static_cast<uint32_t>(inserts_.fetch_add(1, std::memory_order_relaxed) / epoch_len_) & 0xFF;
  const uint32_t fp = fingerprint(hash);
  uint32_t* set = set_of(hash);
  unsigned victim = 0;
  uint32_t oldest_age = 0;
  for (unsigned w = 0; w < kWays; ++w) {
    const uint32_t e = slot(set, w).load(std::memory_order_relaxed);
    if (!fresh(e, epoch) || (e & ~0xFFu) == fp) {  // a free place, or the same key again
      victim = w;
      break;
    }
    const uint32_t age = (epoch - e) & 0xFF;
    if (age >= oldest_age) {
      oldest_age = age;
      victim = w;
    }
  }
  slot(set, victim).store(fp | epoch, std::memory_order_relaxed);
}

bool ghost_set::take(uint64_t hash) noexcept {
  const uint32_t epoch = epoch_now();
  const uint32_t fp = fingerprint(hash);
  uint32_t* set = set_of(hash);
  for (unsigned w = 0; w < kWays; ++w) {
    uint32_t e = slot(set, w).load(std::memory_order_relaxed);
    if ((e & ~0xFFu) != fp || !fresh(e, epoch)) continue;
    return slot(set, w).compare_exchange_strong(e, 0, std::memory_order_relaxed);
  }
  return false;
}

}  // namespace ithaca::store
