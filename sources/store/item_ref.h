// item_ref: a reader's pin on an item (item.h), the value a get hands out instead of a copy.
//
// The store takes the pin under the item's bucket lock (get with get_options::pin); the
// holder reads value() after the lock, on its own thread, for as long as it keeps the ref,
// even if the item is overwritten, deleted, evicted or flushed meanwhile: the item is then
// unlinked but not freed, and still counts against the memory limit, until the last pin goes.
// Releasing may free the item (and close a large value's extent, though large items are
// never pinned): never under a bucket lock. No ref may outlive its store (the server joins
// every worker before it destroys the store).
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>
#include <utility>

#include "item.h"

namespace ithaca::store {

class item_ref {
 public:
  item_ref() noexcept = default;
  // Adopts a pin already taken (item_pin) on `it`, of the store whose home is `home`.
  item_ref(item* it, item_home* home) noexcept : it_(it), home_(home) {}
  item_ref(item_ref&& o) noexcept : it_(std::exchange(o.it_, nullptr)), home_(o.home_) {}
  item_ref& operator=(item_ref&& o) noexcept {
    if (this != &o) {
      reset();
      it_ = std::exchange(o.it_, nullptr);
      home_ = o.home_;
    }
    return *this;
  }
  item_ref(const item_ref&) = delete;
  item_ref& operator=(const item_ref&) = delete;
  ~item_ref() { reset(); }

  explicit operator bool() const noexcept { return it_ != nullptr; }
  // The pinned item's value: immutable, readable without a lock while the ref is held.
  std::string_view value() const noexcept { return it_->value(); }

  void reset() noexcept {
    if (it_) item_release(std::exchange(it_, nullptr), *home_);
  }

  // Hands the pin to a holder that keeps two plain pointers (protocol::value_owner) and
  // later calls release(object, context) exactly once.
  void detach(void*& object, void*& context) noexcept {
    object = std::exchange(it_, nullptr);
    context = home_;
  }
  static void release(void* object, void* context) noexcept {
    item_release(static_cast<item*>(object), *static_cast<item_home*>(context));
  }

 private:
  item* it_ = nullptr;
  item_home* home_ = nullptr;  // the store's region and charge
};

}  // namespace ithaca::store
