// Coroutine stacks: mmap'd with a guard page below, cached per machine and
// reused. Only the machine that owns the cache touches it (no lock).
#pragma once

#include <boost/context/stack_context.hpp>

#include <cstddef>
#include <vector>

namespace mm::detail {

class stack_cache {
 public:
  stack_cache(size_t stack_size, size_t max_cached);
  ~stack_cache();
  stack_cache(const stack_cache&) = delete;
  stack_cache& operator=(const stack_cache&) = delete;

  // Returns a stack (sp at its top), or sp == nullptr if mmap failed.
  boost::context::stack_context allocate();
  void deallocate(boost::context::stack_context& sctx);
  size_t cached() const { return free_.size(); }
  size_t stack_size() const { return size_; }

 private:
  size_t size_;  // usable bytes, page multiple
  size_t page_;
  size_t max_cached_;
  std::vector<void*> free_;  // bases (guard page address) of free stacks
};

// The StackAllocator boost::context::fiber asks for; forwards to a cache.
struct stack_allocator {
  stack_cache* cache;
  void** bottom_out;  // where the coroutine keeps its stack bottom (for ASan)
  boost::context::stack_context allocate() {
    boost::context::stack_context sctx = cache->allocate();
    if (sctx.sp) *bottom_out = static_cast<char*>(sctx.sp) - sctx.size;
    return sctx;
  }
  void deallocate(boost::context::stack_context& sctx) noexcept { cache->deallocate(sctx); }
};

}  // namespace mm::detail
