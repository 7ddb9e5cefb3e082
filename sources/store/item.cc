#include "item.h"

#include <cstdlib>
#include <malloc.h>

namespace ithaca::store {

item* item_alloc(std::string_view key, size_t value_len) noexcept {
  void* mem = std::malloc(sizeof(item) + key.size() + value_len);
  if (!mem) return nullptr;
  auto* it = static_cast<item*>(mem);
  std::memset(it, 0, sizeof(item));
  it->refs_ = 1;  // the caller's, not yet shared: a plain store
  it->key_len_ = static_cast<uint8_t>(key.size());
  it->value_len_ = static_cast<uint32_t>(value_len);
  it->usable_ = static_cast<uint32_t>(malloc_usable_size(mem));
  std::memcpy(it->key_data(), key.data(), key.size());
  return it;
}

item* item_alloc_large(std::string_view key, large_value* v) noexcept {
  item* it = item_alloc(key, sizeof v);
  if (!it) return nullptr;
  it->bits_ |= kLarge;
  std::memcpy(it->value_data(), &v, sizeof v);
  return it;
}

size_t item_mem(const item* it) noexcept {
  size_t n = it->usable_;
  if (it->is_large()) n += sizeof(large_value) + 16;  // the handle object and its malloc header
  return n;
}

void item_release(item* it, std::atomic<int64_t>& bytes) noexcept {
  // release: this holder's reads of the value happen before the free; the fence gives the
  // freeing thread every other holder's.
  if (std::atomic_ref<uint32_t>(it->refs_).fetch_sub(1, std::memory_order_release) != 1) return;
  std::atomic_thread_fence(std::memory_order_acquire);
  bytes.fetch_sub(static_cast<int64_t>(item_mem(it)), std::memory_order_relaxed);
  item_free(it);
}

void item_free(item* it) noexcept {
  if (it->is_large()) it->large()->unref();
  std::free(it);
}

}  // namespace ithaca::store
