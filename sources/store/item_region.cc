#include "item_region.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <mutex>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace ithaca::store {

namespace {

// The header word's flag bits (sizes are multiples of 8).
constexpr uint64_t kRegionFree = 1;      // this block is free
constexpr uint64_t kRegionPrevFree = 2;  // the block before it is free (its size is in our word -1)
constexpr uint64_t kRegionFlags = 7;
constexpr uint64_t kRegionHeader = 8;
// A free block holds its header, two links and its size again at its end.
constexpr uint64_t kRegionMinBlock = 32;
// Below this size the first level is one list per 8 bytes.
constexpr uint64_t kRegionSmall = 128;

uint64_t region_page() noexcept {
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return page;
}

uint64_t region_page_up(uint64_t n) noexcept { return (n + region_page() - 1) & ~(region_page() - 1); }

// Under AddressSanitizer the region is its own allocator's memory, which ASan knows
// nothing of: a free block's payload (past its links, before its last word) is poisoned,
// so a read of a freed item is reported as it was with malloc; a block handed out, or
// about to be rewritten by a split or a merge, is unpoisoned first. No-ops otherwise.
void region_poison(char* p, uint64_t n) noexcept {
#if defined(__SANITIZE_ADDRESS__)
  if (n) ASAN_POISON_MEMORY_REGION(p, n);
#else
  (void)p;
  (void)n;
#endif
}
void region_unpoison(char* p, uint64_t n) noexcept {
#if defined(__SANITIZE_ADDRESS__)
  if (n) ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
  (void)p;
  (void)n;
#endif
}

}  // namespace

item_region::item_region(int fd, uint64_t committed, uint64_t reserve, uint64_t budget, bool huge)
    : fd_(fd), huge_(huge), budget_(budget) {
  for (auto& fl : heads_) std::fill(std::begin(fl), std::end(fl), kNil);
  committed_ = region_page_up(std::max<uint64_t>(committed, region_page()));
  if (fd_ >= 0) {
    reserve_ = committed_;
    struct stat st {};
    if (fstat(fd_, &st) != 0 ||
        (static_cast<uint64_t>(st.st_size) != reserve_ && ftruncate(fd_, static_cast<off_t>(reserve_)) != 0)) {
      ::close(fd_);
      throw std::bad_alloc();
    }
    void* p = mmap(nullptr, reserve_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) {
      ::close(fd_);
      throw std::bad_alloc();
    }
    base_ = static_cast<char*>(p);
    return;
  }
  reserve_ = region_page_up(std::max(reserve, committed_));
  void* p = mmap(nullptr, reserve_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  base_ = static_cast<char*>(p);
  if (mprotect(base_, committed_, PROT_READ | PROT_WRITE) != 0) {
    munmap(base_, reserve_);
    throw std::bad_alloc();
  }
  if (huge_) madvise(base_, reserve_, MADV_HUGEPAGE);
}

item_region::~item_region() {
  // ASan's shadow outlives the mapping: a later mapping at these addresses (the next
  // store's region, a hash table) must not find them poisoned. Only the blocks ever
  // made were poisoned: unpoisoning all that is committed would write the shadow of a
  // raised limit (20 GB of limit, 2.5 GB of shadow) and take seconds at exit.
  region_unpoison(base_, top_high_);
  munmap(base_, reserve_);
  if (fd_ >= 0) ::close(fd_);
}

uint64_t item_region::block_size(size_t bytes) noexcept {
  return std::max<uint64_t>((bytes + kRegionHeader + 7) & ~uint64_t{7}, kRegionMinBlock);
}

void item_region::mapping(uint64_t size, unsigned& fl, unsigned& sl) noexcept {
  if (size < kRegionSmall) {
    fl = 0;
    sl = static_cast<unsigned>(size >> 3);
    return;
  }
  const unsigned b = 63u - static_cast<unsigned>(std::countl_zero(size));
  fl = b - 6;  // 128..255 is level 1
  sl = static_cast<unsigned>(size >> (b - kSlLog)) & (kSl - 1);
}

void item_region::list_insert(uint64_t off, uint64_t size) noexcept {
  unsigned fl, sl;
  mapping(size, fl, sl);
  const uint64_t head = heads_[fl][sl];
  word(off + 8) = head;   // next
  word(off + 16) = kNil;  // prev
  if (head != kNil) word(head + 16) = off;
  heads_[fl][sl] = off;
  fl_bitmap_ |= uint64_t{1} << fl;
  sl_bitmap_[fl] |= 1u << sl;
}

void item_region::list_remove(uint64_t off, uint64_t size) noexcept {
  unsigned fl, sl;
  mapping(size, fl, sl);
  const uint64_t next = word(off + 8);
  const uint64_t prev = word(off + 16);
  if (next != kNil) word(next + 16) = prev;
  if (prev != kNil) {
    word(prev + 8) = next;
    return;
  }
  heads_[fl][sl] = next;
  if (next == kNil) {
    sl_bitmap_[fl] &= ~(1u << sl);
    if (!sl_bitmap_[fl]) fl_bitmap_ &= ~(uint64_t{1} << fl);
  }
}

// First a few blocks of the request's own list (its blocks may be smaller or larger than
// the request): a cache's items come in a few sizes, and a block freed by an item of the
// same size is the exact fit, which TLSF's rounded search below would never look at (it
// wants a list whose every block is big enough). Then TLSF's good fit: the request rounded
// up to the next list boundary, so that any block of the list found is big enough. The
// rounding costs at most 1/16 of the size in the block chosen (the split gives the rest
// back), not in the item.
uint64_t item_region::find_fit(uint64_t size) noexcept {
  constexpr int kRegionExactLooks = 4;
  {
    unsigned fl, sl;
    mapping(size, fl, sl);
    if (fl >= kFl) return kNil;
    uint64_t off = heads_[fl][sl];
    for (int i = 0; i < kRegionExactLooks && off != kNil; ++i, off = word(off + 8)) {
      if ((word(off) & ~kRegionFlags) >= size) return off;
    }
  }
  if (size >= kRegionSmall) {
    const unsigned b = 63u - static_cast<unsigned>(std::countl_zero(size));
    size += (uint64_t{1} << (b - kSlLog)) - 1;
  }
  unsigned fl, sl;
  mapping(size, fl, sl);
  if (fl >= kFl) return kNil;
  uint32_t sbits = sl_bitmap_[fl] & (~0u << sl);
  if (!sbits) {
    const uint64_t fbits = fl + 1 < 64 ? fl_bitmap_ & (~uint64_t{0} << (fl + 1)) : 0;
    if (!fbits) return kNil;
    fl = static_cast<unsigned>(std::countr_zero(fbits));
    sbits = sl_bitmap_[fl];
  }
  sl = static_cast<unsigned>(std::countr_zero(sbits));
  return heads_[fl][sl];
}

void item_region::publish() noexcept {
  top_high_ = std::max(top_high_, top_);
  top_view_.store(top_, std::memory_order_relaxed);
  free_view_.store(free_, std::memory_order_relaxed);
}

void* item_region::alloc(size_t bytes, uint32_t& block, uint64_t bound) noexcept {
  const uint64_t size = block_size(bytes);
  std::lock_guard<bucket_lock> g(lock_);
  uint64_t off = find_fit(size);
  uint64_t got;
  if (off != kNil) {
    got = word(off) & ~kRegionFlags;
    list_remove(off, got);
    free_ -= got;
    region_unpoison(base_ + off, got);
    const uint64_t next = off + got;
    if (got - size >= kRegionMinBlock) {  // split: the rest stays free
      const uint64_t rest = off + size;
      const uint64_t rest_size = got - size;
      word(rest) = rest_size | kRegionFree;  // its previous block (ours) is used
      word(rest + rest_size - 8) = rest_size;
      list_insert(rest, rest_size);
      free_ += rest_size;
      region_poison(base_ + rest + 24, rest_size - 32);
      got = size;
    } else if (next < top_) {
      word(next) &= ~kRegionPrevFree;
    }
    // The block before a free block is never free (they would have merged).
    word(off) = got;
  } else {
    const uint64_t limit = std::min({budget_.load(std::memory_order_relaxed), committed_, bound});
    if (top_ + size > limit) return nullptr;
    off = top_;
    got = size;
    region_unpoison(base_ + off, got);
    word(off) = got;  // the block before top is never free (it melts into top)
    top_ += got;
  }
  publish();
  block = static_cast<uint32_t>(got);
  return base_ + off + kRegionHeader;
}

void item_region::free(void* p) noexcept {
  uint64_t off = static_cast<uint64_t>(static_cast<char*>(p) - base_) - kRegionHeader;
  std::lock_guard<bucket_lock> g(lock_);
  uint64_t size = word(off) & ~kRegionFlags;
  const uint64_t next = off + size;
  if (next < top_ && (word(next) & kRegionFree)) {
    const uint64_t next_size = word(next) & ~kRegionFlags;
    list_remove(next, next_size);
    free_ -= next_size;
    region_unpoison(base_ + next, next_size);
    size += next_size;
  }
  if (word(off) & kRegionPrevFree) {
    const uint64_t prev_size = word(off - 8);
    off -= prev_size;
    list_remove(off, prev_size);
    free_ -= prev_size;
    region_unpoison(base_ + off, prev_size);
    size += prev_size;
  }
  if (off + size == top_) {
    top_ = off;  // melts into the untouched end
    region_poison(base_ + off, size);
  } else {
    word(off) = size | kRegionFree;
    word(off + size - 8) = size;
    word(off + size) |= kRegionPrevFree;
    list_insert(off, size);
    free_ += size;
    region_poison(base_ + off + 24, size - 32);
  }
  publish();
}

bool item_region::set_budget(uint64_t budget) noexcept {
  std::lock_guard<bucket_lock> g(lock_);
  if (budget > committed_) {
    // A file cannot grow under its mapping: the limit is refused.
    if (fd_ >= 0) return false;
    // memcached takes any larger limit (it only allocates as it goes); so does this
    // region, up to what it reserved and the kernel lets it commit: past that the
    // items stay within what is committed, whatever the limit says.
    const uint64_t want = std::min(region_page_up(budget), reserve_);
    if (want > committed_ && mprotect(base_ + committed_, want - committed_, PROT_READ | PROT_WRITE) == 0) {
      committed_ = want;
    }
  }
  budget_.store(std::min(budget, committed_), std::memory_order_relaxed);
  return true;
}

uint64_t item_region::trim() noexcept {
  const uint64_t page = region_page();
  uint64_t advised = 0;
  auto advise = [&](uint64_t from, uint64_t to) {
    from = region_page_up(from);
    to &= ~(page - 1);
    if (to <= from) return;
    // A file's pages are its own (tmpfs): MADV_REMOVE frees them; DONTNEED would only unmap.
    madvise(base_ + from, to - from, fd_ >= 0 ? MADV_REMOVE : MADV_DONTNEED);
    advised += to - from;
  };
  std::lock_guard<bucket_lock> g(lock_);
  for (uint64_t off = 0; off < top_;) {
    const uint64_t w = word(off);
    const uint64_t size = w & ~kRegionFlags;
    // A free block keeps its header and links (first 24 bytes) and its last word.
    if (w & kRegionFree) advise(off + 24, off + size - 8);
    off += size;
  }
  advise(top_, committed_);
  return advised;
}

}  // namespace ithaca::store
