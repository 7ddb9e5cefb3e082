// large_value: a value kept outside the heap, in one extent of the store's large_arena
// (yrmcds "large data", but in a bounded number of files: see large_arena.h).
//
// The extent is written once, before the bucket lock is taken, and never changes afterwards
// (a new store makes a new extent), so readers need no lock: a get takes a reference under
// the bucket lock and reads with pread() after unlocking, from any thread (a worker, or the
// replication stream). The extent goes back to the arena when the last reference goes, so it
// is never reused while a reader holds it; the store drops its reference outside the lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <utility>

namespace ithaca::store {

class large_arena;

class large_value {
 public:
  // Writes data into a new extent of `arena`. Returns nullptr with errno set on failure
  // (ENOSPC: the arena's budget has no room). Does file I/O: never call under a lock.
  // The result has one reference.
  static large_value* create(large_arena& arena, std::string_view data) noexcept;

  // pread() of up to len bytes at offset; returns bytes read or -1 with errno.
  ssize_t read(uint64_t offset, char* buf, size_t len) const noexcept;

  uint64_t size() const noexcept { return size_; }

  // Reference counting; any thread, lock-free. unref() may release the extent (file I/O):
  // no lock held.
  void ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void unref() noexcept;

 private:
  large_value(large_arena& arena, uint64_t offset, uint64_t size) noexcept
      : arena_(arena), offset_(offset), size_(size) {}
  ~large_value();

  std::atomic<uint32_t> refs_{1};
  large_arena& arena_;
  uint64_t offset_;
  uint64_t size_;
};

// Owning handle handed to callers of get(); copyable, move-cheap.
class large_value_ref {
 public:
  large_value_ref() noexcept = default;
  // Adopts one existing reference.
  explicit large_value_ref(large_value* v) noexcept : v_(v) {}
  large_value_ref(const large_value_ref& o) noexcept : v_(o.v_) {
    if (v_) v_->ref();
  }
  large_value_ref(large_value_ref&& o) noexcept : v_(std::exchange(o.v_, nullptr)) {}
  large_value_ref& operator=(large_value_ref o) noexcept {
    std::swap(v_, o.v_);
    return *this;
  }
  ~large_value_ref() {
    if (v_) v_->unref();
  }

  explicit operator bool() const noexcept { return v_ != nullptr; }
  const large_value* operator->() const noexcept { return v_; }
  const large_value* get() const noexcept { return v_; }
  void reset() noexcept { large_value_ref().swap(*this); }
  void swap(large_value_ref& o) noexcept { std::swap(v_, o.v_); }

  // Reads the whole value into out (resizes it). False on I/O error.
  bool read_all(std::string& out) const;

 private:
  large_value* v_ = nullptr;
};

}  // namespace ithaca::store
