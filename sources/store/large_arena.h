// large_arena: where values above large_value_threshold live. One unlinked
// temporary file per store (one descriptor, whatever is stored), inside a disk
// budget of its own (cache.large_value_disk_limit); each value is one
// contiguous extent of it, in kPage units.
//
// Allocation is first-fit over a free list (offset -> length, neighbours
// merged on release) plus a high-water mark that grows the file. An extent
// comes back only when the last reference to its value goes (large_value's
// refcount): a reader holding a reference keeps its bytes from being reused.
// Its blocks are punched out of the file (FALLOC_FL_PUNCH_HOLE) before it is
// made reusable, with no lock held, so the file's disk usage follows the
// live values and never exceeds the budget.
//
// Threads: any. Lock: mutex_, a leaf, held for the free-list arithmetic only
// (no I/O, no allocation beyond a map node); never taken under a bucket lock
// (stores allocate before taking theirs, values are released after).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <sys/types.h>

namespace ithaca::store {

class large_arena {
 public:
  static constexpr uint64_t kPage = 4096;

  // Opens the arena's file in `dir` (O_TMPFILE, or mkstemp + unlink). nullptr with errno
  // set on failure. [blocking I/O: start-up]
  static std::unique_ptr<large_arena> open(const std::string& dir, uint64_t limit) noexcept;
  ~large_arena();
  large_arena(const large_arena&) = delete;
  large_arena& operator=(const large_arena&) = delete;

  // Reserves an extent of at least `len` bytes (rounded up to kPage). False when the
  // budget has no room for it (the caller evicts and retries, or refuses the store).
  bool allocate(uint64_t len, uint64_t& offset) noexcept;
  // Gives an extent back: punches its blocks out, then makes it reusable. [no lock held]
  void release(uint64_t offset, uint64_t len) noexcept;

  // Whole-buffer pwrite / pread at `offset`; false on an I/O error (errno set).
  bool write(uint64_t offset, const char* data, uint64_t len) const noexcept;
  ssize_t read(uint64_t offset, char* buf, uint64_t len) const noexcept;

  static uint64_t rounded(uint64_t len) noexcept { return (len + kPage - 1) / kPage * kPage; }
  uint64_t used() const noexcept { return used_.load(std::memory_order_relaxed); }
  uint64_t limit() const noexcept { return limit_.load(std::memory_order_relaxed); }
  // A lower limit refuses new extents until evictions bring usage under it. [any thread]
  void set_limit(uint64_t bytes) noexcept { limit_.store(bytes, std::memory_order_relaxed); }
  // True if an extent of `len` bytes fits in the budget by size (it may still not fit in
  // one piece of the free list; allocate() says).
  bool has_room(uint64_t len) const noexcept { return used() + rounded(len) <= limit(); }
  // The file's high-water mark (its apparent size in use). 0 once every extent is back:
  // released extents merge with their free neighbours and a free top lowers the mark.
  // [any thread; takes mutex_]
  uint64_t file_end() noexcept {
    std::lock_guard lock(mutex_);
    return end_;
  }

 private:
  large_arena(int fd, uint64_t limit) noexcept : fd_(fd), limit_(limit) {}

  const int fd_;
  std::atomic<uint64_t> limit_;
  std::atomic<uint64_t> used_{0};  // bytes in live extents
  std::mutex mutex_;
  std::map<uint64_t, uint64_t> free_;  // offset -> length, below end_   [mutex_]
  uint64_t end_ = 0;                   // the file's high-water mark       [mutex_]
};

}  // namespace ithaca::store
