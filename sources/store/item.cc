#include "item.h"

#include <cstdlib>

namespace ithaca::store {

item* item_alloc(item_region& region, std::string_view key, size_t value_len, uint64_t bound) noexcept {
  uint32_t block = 0;
  void* mem = region.alloc(sizeof(item) + key.size() + value_len, block, bound);
  if (!mem) return nullptr;
  auto* it = static_cast<item*>(mem);
  std::memset(it, 0, sizeof(item));
  it->refs_ = 1;  // the caller's, not yet shared: a plain store
  it->key_len_ = static_cast<uint8_t>(key.size());
  it->value_len_ = static_cast<uint32_t>(value_len);
  it->block_ = block;
  std::memcpy(it->key_data(), key.data(), key.size());
  return it;
}

size_t item_mem(const item* it) noexcept {
  size_t n = it->block_;
  if (it->is_large()) n += sizeof(large_value) + 16;  // the handle object and its malloc header
  return n;
}

void item_release(item* it, item_home& home) noexcept {
  // release: this holder's reads of the value happen before the free; the fence gives the
  // freeing thread every other holder's.
  if (std::atomic_ref<uint32_t>(it->refs_).fetch_sub(1, std::memory_order_release) != 1) return;
  std::atomic_thread_fence(std::memory_order_acquire);
  home.bytes.fetch_sub(static_cast<int64_t>(item_mem(it)), std::memory_order_relaxed);
  item_free(it, home.region);
}

void item_free(item* it, item_region& region) noexcept {
  if (it->is_large()) it->large()->unref();
  region.free(it);
}

}  // namespace ithaca::store
