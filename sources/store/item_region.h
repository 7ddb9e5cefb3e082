// item_region: the one mapping every item lives in, and its allocator (INTERNALS.md, "Item
// memory").
//
// A range of address space reserved once (PROT_NONE: no commit charge, no pages) of which
// the first `committed` bytes are readable and writable; blocks are carved from its start
// upwards. [0, top) is a sequence of blocks, each an 8-byte header word (its size, a
// multiple of 8, and two flag bits: free, previous block free) and then its payload; a free
// block also holds two free-list links (as offsets from the base) and a copy of its size in
// its last word, so that the block after it finds where it starts. Nothing in the region
// holds an absolute address of the region's own: a walk from offset 0 by the sizes finds
// every block whatever address the mapping has.
//
// Free blocks are kept in two-level segregated lists (TLSF: Masmano et al., ECRTS 2004): a
// first level by power of two, sixteen second-level lists within each, a bitmap per level,
// so finding a block that fits is two find-first-set instructions. A freed block merges
// with free neighbours at once (the boundary tags), and the block next to `top` melts into
// it, so memory an eviction freed is one block for the next store of any size: S3-FIFO's one
// eviction order serves every size (no per-size queues, nothing calcifies).
//
// `top` never rises past `budget` (the store's memory limit): what the process has
// touched of the region stays within the limit, whatever the sizes did. A store that finds
// no block and no room below the budget evicts (the store's order) and asks again.
//
// Threads: any; one spin lock (the region's), held for a list operation, never with a
// bucket lock, never across a system call but in trim() and grow(), which run on the cron
// or a cache_memlimit command (rare; the lock is then held for the madvise calls).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "bucket_lock.h"

namespace ithaca::store {

class item_region {
 public:
  // Reserves `reserve` bytes of address space (at least `committed`) and makes the first
  // `committed` readable and writable. `huge`: advise MADV_HUGEPAGE (-L). Throws
  // std::bad_alloc if the mapping cannot be had. [start-up]
  item_region(uint64_t committed, uint64_t reserve, uint64_t budget, bool huge)
      : item_region(-1, committed, reserve, budget, huge) {}
  // fd >= 0: a region that is that file (adopted: closed by the destructor), mapped
  // shared, `committed` bytes (the file is made that long), which it cannot grow past
  // (`reserve` is not used). Throws std::bad_alloc if the file cannot be sized or mapped.
  item_region(int fd, uint64_t committed, uint64_t reserve, uint64_t budget, bool huge);
  ~item_region();
  item_region(const item_region&) = delete;
  item_region& operator=(const item_region&) = delete;

  // A block of at least `bytes` payload, 8-aligned; its whole size (header included: what
  // it costs) in `block`. nullptr if no free block fits and `top` cannot rise within the
  // budget, nor within `bound` (the store's limit less what it spends outside the region)
  // (the caller evicts and asks again). [any thread, no bucket lock held]
  void* alloc(size_t bytes, uint32_t& block, uint64_t bound = ~uint64_t{0}) noexcept;
  // Gives back a block alloc returned. [any thread, no bucket lock held]
  void free(void* p) noexcept;
  // What a block for `bytes` of payload costs (header and rounding).
  static uint64_t block_size(size_t bytes) noexcept;

  // The bound on `top`. Raising it past what is committed commits more, up to the
  // reservation (and what the kernel allows): the bound is then what is committed; false
  // only for a file-backed region, which cannot grow. Lowering it keeps what is above
  // until it is freed. [any thread]
  bool set_budget(uint64_t budget) noexcept;
  uint64_t budget() const noexcept { return budget_.load(std::memory_order_relaxed); }
  // Returns the pages of every free block and of what lies above `top` to the kernel
  // (MADV_DONTNEED): after a lowered limit, so RSS follows it down. Walks every block under
  // the lock. Returns the bytes advised. [the cron; rare]
  uint64_t trim() noexcept;

  // Figures for `stats` and tests (relaxed: approximate while others allocate).
  uint64_t top() const noexcept { return top_view_.load(std::memory_order_relaxed); }
  uint64_t free_bytes() const noexcept { return free_view_.load(std::memory_order_relaxed); }
  uint64_t committed() const noexcept { return committed_; }
  uint64_t reserved() const noexcept { return reserve_; }
  // A file-backed region's walk at start-up (memory_file.h): takes [0, top) as the blocks a
  // stopped process left, checks that every tag agrees (sizes within bounds, free flags and
  // end copies, no two free blocks side by side), rebuilds the free lists and appends each
  // used block's payload offset to `used`. False if anything disagrees: the region is then
  // left empty. [start-up, one thread]
  template <typename Vec>
  bool adopt(uint64_t top, Vec& used);
  bool file_backed() const noexcept { return fd_ >= 0; }
  char* base() const noexcept { return base_; }
  // Whether `p` lies in the region (tests).
  bool contains(const void* p) const noexcept {
    auto* c = static_cast<const char*>(p);
    return c >= base_ && c < base_ + reserve_;
  }

 private:
  static constexpr unsigned kSlLog = 4;
  static constexpr unsigned kSl = 1u << kSlLog;  // second-level lists per power of two
  static constexpr unsigned kFl = 48;            // first levels: blocks up to 2^53 bytes
  static constexpr uint64_t kNil = ~uint64_t{0};

  uint64_t& word(uint64_t off) noexcept { return *reinterpret_cast<uint64_t*>(base_ + off); }
  static void mapping(uint64_t size, unsigned& fl, unsigned& sl) noexcept;
  void list_insert(uint64_t off, uint64_t size) noexcept;
  void list_remove(uint64_t off, uint64_t size) noexcept;
  uint64_t find_fit(uint64_t size) noexcept;  // a free block >= size, or kNil
  void publish() noexcept;

  char* base_ = nullptr;
  int fd_ = -1;  // the memory file, or -1 (anonymous)
  uint64_t reserve_ = 0;
  uint64_t committed_ = 0;  // [lock] readable and writable from base_
  bool huge_ = false;
  std::atomic<uint64_t> budget_;
  bucket_lock lock_{};
  // [lock] the blocks' end, the free lists and their bitmaps, the free total
  uint64_t top_ = 0;
  uint64_t top_high_ = 0;  // the highest top_ so far: nothing past it was ever poisoned
  uint64_t free_ = 0;
  uint64_t fl_bitmap_ = 0;
  uint32_t sl_bitmap_[kFl] = {};
  uint64_t heads_[kFl][kSl];
  // Copies of top_ and free_ for readers without the lock.
  std::atomic<uint64_t> top_view_{0};
  std::atomic<uint64_t> free_view_{0};
};

template <typename Vec>
bool item_region::adopt(uint64_t top, Vec& used) {
  constexpr uint64_t kFree = 1, kPrevFree = 2, kFlags = 7;
  if (top > committed_ || top % 8) return false;
  bool prev_free = false;
  for (uint64_t off = 0; off < top;) {
    const uint64_t w = word(off);
    const uint64_t size = w & ~kFlags;
    const bool is_free = w & kFree;
    if (size < 32 || size > top - off || ((w & kPrevFree) != 0) != prev_free || (is_free && prev_free) ||
        (is_free && word(off + size - 8) != size)) {
      used.clear();
      return false;
    }
    if (!is_free) used.push_back(off + 8);
    prev_free = is_free;
    off += size;
  }
  if (prev_free) {  // a free block before top would have melted into it
    used.clear();
    return false;
  }
  top_ = top;
  free_ = 0;
  for (uint64_t off = 0; off < top;) {
    const uint64_t w = word(off);
    const uint64_t size = w & ~kFlags;
    if (w & kFree) {
      list_insert(off, size);
      free_ += size;
    }
    off += size;
  }
  publish();
  return true;
}

}  // namespace ithaca::store
