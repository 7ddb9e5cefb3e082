// reclaim_list: items unlinked under a bucket lock, released after it is: each loses the
// reference its chain held, and is freed unless a reader still pins it (item.h).
//
// Declare it before the bucket_guard in the same scope: destructors run in reverse order, so
// the lock is released first, then the region's frees and large-value closes happen lock-free.
#pragma once

#include <atomic>
#include <cstdint>

#include "item.h"

namespace ithaca::store {

struct reclaim_list {
  explicit reclaim_list(item_home& home) noexcept : home_(home) {}
  reclaim_list(const reclaim_list&) = delete;
  reclaim_list& operator=(const reclaim_list&) = delete;
  ~reclaim_list() {
    while (head_) {
      item* next = head_->next_;
      item_release(head_, home_);  // next_ was read first: a reader never writes it
      head_ = next;
    }
  }

  // Under the lock: a pointer push only.
  void add(item* it) noexcept {
    it->next_ = head_;
    head_ = it;
  }

 private:
  item_home& home_;  // the store's region and memory charge
  item* head_ = nullptr;
};

}  // namespace ithaca::store
