#include "stack.h"

#include <sys/mman.h>
#include <unistd.h>

#include <new>

#if defined(MM_ASAN)
#include <sanitizer/asan_interface.h>
// A finished coroutine leaves ASan's poison (frame redzones) on its stack. Clear
// it when the stack is freed or cached, or a later mapping at the same address
// (another stack, an io_uring ring) is reported as a stack overflow.
#define MM_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define MM_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace mm::detail {

namespace {
// Cached stacks kept with their pages (the common case reuses one at once).
constexpr size_t kWarmStacks = 64;
}  // namespace

stack_cache::stack_cache(size_t stack_size, size_t max_cached)
    : page_(static_cast<size_t>(sysconf(_SC_PAGESIZE))), max_cached_(max_cached) {
#if defined(MM_ASAN)
  // AddressSanitizer's redzones make frames several times larger.
  if (stack_size < 256 * 1024) stack_size = 256 * 1024;
#endif
  if (stack_size < 16 * 1024) stack_size = 16 * 1024;
  size_ = (stack_size + page_ - 1) / page_ * page_;
}

stack_cache::~stack_cache() {
  for (void* base : free_) {
    MM_UNPOISON(static_cast<char*>(base) + page_, size_);
    munmap(base, size_ + page_);
  }
}

boost::context::stack_context stack_cache::allocate() {
  boost::context::stack_context sctx;
  void* base = nullptr;
  if (!free_.empty()) {
    base = free_.back();
    free_.pop_back();
  } else {
    base = mmap(nullptr, size_ + page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                -1, 0);
    // Boost.Context expects a throwing allocator; machine::create catches it.
    if (base == MAP_FAILED) throw std::bad_alloc();
    // Guard page at the low end: stacks grow down, an overflow faults.
    mprotect(base, page_, PROT_NONE);
  }
  sctx.size = size_;
  sctx.sp = static_cast<char*>(base) + page_ + size_;
  return sctx;
}

void stack_cache::deallocate(boost::context::stack_context& sctx) {
  void* base = static_cast<char*>(sctx.sp) - size_ - page_;
  MM_UNPOISON(static_cast<char*>(base) + page_, size_);
  if (free_.size() < max_cached_) {
    // Past the first kWarmStacks, a cached stack keeps its mapping but not
    // its pages: after a burst of clients left, their stacks' memory goes
    // back to the kernel, and a later coroutine faults in what it touches.
    if (free_.size() >= kWarmStacks) madvise(static_cast<char*>(base) + page_, size_, MADV_DONTNEED);
    free_.push_back(base);
  } else {
    munmap(base, size_ + page_);
  }
}

}  // namespace mm::detail
