// The small helpers every store path calls under (or just before) a bucket lock: the key's
// hash, the chain walk, an item's validity, linking, the observer's notes, the per-class
// link counts, CAS and lease numbers. Defined inline here, included by the store's .cc files
// only (store.cc, store_get.cc, store_write.cc, rmw.cc, gc.cc), so that the get and set paths
// keep them inlined across the files they are split into (the build has no LTO).
#pragma once

#include <cstring>
#include <string_view>

#include "hash.h"
#include "store.h"

namespace ithaca::store {

inline bool valid_key(std::string_view key) noexcept { return !key.empty() && key.size() <= kKeyMax; }

inline uint64_t store::hash_of(std::string_view key) const noexcept { return hash_key(key, seed_); }

// Under table_.lock_of(h).
inline void store::link_first(uint64_t h, item* it) noexcept {
  item** head = table_.head_of(h);
  it->next_ = *head;
  *head = it;
}

// Under table_.lock_of(h).
inline item** store::find_link(uint64_t h, std::string_view key) noexcept {
  item** link = table_.head_of(h);
  while (*link) {
    const item* it = *link;
    if (it->key_len_ == key.size() && std::memcmp(it->key_data(), key.data(), key.size()) == 0) return link;
    link = &(*link)->next_;
  }
  return link;
}

// Under the item's bucket lock.
inline bool store::invalid(const item* it, uint32_t sec, remove_reason& why) const noexcept {
  if (deadline_passed(it->deadline_, sec) && (it->is_placeholder() || !expiry_by_master())) {
    why = remove_reason::Expired;
    return true;
  }
  if (it->is_placeholder()) return false;  // cas_ is a lease token, not subject to flush_all
  if (it->cas_ <= oldest_cas_.load(std::memory_order_relaxed)) {
    why = remove_reason::Flushed;
    return true;
  }
  const uint32_t ol = oldest_live_.load(std::memory_order_relaxed);
  if (ol != 0 && ol <= sec && it->stime_ <= ol) {
    why = remove_reason::Flushed;
    return true;
  }
  return false;
}

// Under the item's bucket lock.
inline bool store::hidden_expired(const item* it, uint32_t sec) const noexcept {
  return !it->is_placeholder() && deadline_passed(it->deadline_, sec) && expiry_by_master();
}

// Under the item's bucket lock: unlinks *link, notifies, hands it to rl for freeing.
inline item* store::find_valid(uint64_t h, std::string_view key, uint32_t sec, reclaim_list& rl, item**& link,
                               bool reclaim) noexcept {
  link = find_link(h, key);
  item* it = *link;
  remove_reason why;
  if (it && invalid(it, sec, why)) {
    if (reclaim && !it->is_placeholder()) count_reclaimed(it, why);
    unlink(link, rl, why);
    return nullptr;
  }
  return it;
}

// Under the item's bucket lock.
inline void store::notify_store(const item* it) noexcept {
  if (!observer_ || it->is_placeholder()) return;
  item_view v{it->key(),
              it->flags_,
              it->deadline_,
              it->cas_,
              it->is_large() ? std::string_view{} : it->value(),
              it->is_large() ? it->large() : nullptr};
  observer_->on_store(v);
}

// Under the item's bucket lock.
inline void store::notify_touch(const item* it) noexcept {
  if (!observer_ || it->is_placeholder()) return;
  observer_->on_touch(item_view{it->key(), it->flags_, it->deadline_, it->cas_, {}, nullptr});
}

// Under the item's bucket lock, as it is linked: its flags and value are final.
inline void store::class_link(item* it) noexcept {
  const uint64_t total = classes_.item_total(it->key_len_, it->flags_, it->data_size());
  const unsigned cls = classes_.class_for(total);
  it->slab_class_ = static_cast<uint8_t>(cls);
  class_account(it, cls, total, 1);
  if (it->bits_ & kSmall) {  // s3fifo_admit put it in the small queue
    small_bytes_.fetch_add(static_cast<int64_t>(item_mem(it)), std::memory_order_relaxed);
    stats_.add(store_counter::small_items);
  }
}

inline void store::small_leave(const item* it) noexcept {
  small_bytes_.fetch_sub(static_cast<int64_t>(item_mem(it)), std::memory_order_relaxed);
  stats_.add(store_counter::small_items, -1);
}

// Under the item's bucket lock, as it is unlinked (or replaced).
inline void store::class_unlink(const item* it) noexcept {
  const uint64_t total = classes_.item_total(it->key_len_, it->flags_, it->data_size());
  class_account(it, it->slab_class_, total, -1);
  if (it->bits_ & kSmall) small_leave(it);
  if (it->bits_ & kCold) cold_bytes_.fetch_sub(static_cast<int64_t>(item_mem(it)), std::memory_order_relaxed);
}

inline void store::cold_leave(item* it) noexcept {
  it->bits_ &= static_cast<uint8_t>(~kCold);
  cold_bytes_.fetch_sub(static_cast<int64_t>(item_mem(it)), std::memory_order_relaxed);
}

inline uint64_t store::next_cas() noexcept { return cas_counter_.fetch_add(1, std::memory_order_relaxed) + 1; }

// Tokens 0, 1 and 2 mean "none", "wait" and "hot miss" to mcrouter clients: never issue them.
inline uint64_t store::next_lease_token() noexcept {
  for (;;) {
    uint64_t t = lease_counter_.fetch_add(1, std::memory_order_relaxed);
    if (t > 2) return t;
  }
}

}  // namespace ithaca::store
