#include "large_value.h"

#include <cerrno>
#include <new>

#include "large_arena.h"

namespace ithaca::store {

large_value* large_value::create(large_arena& arena, std::string_view data) noexcept {
  uint64_t offset = 0;
  if (!arena.allocate(data.size(), offset)) {
    errno = ENOSPC;
    return nullptr;
  }
  if (!arena.write(offset, data.data(), data.size())) {
    const int saved = errno;
    arena.release(offset, data.size());
    errno = saved;
    return nullptr;
  }
  auto* v = new (std::nothrow) large_value(arena, offset, data.size());
  if (!v) {
    arena.release(offset, data.size());
    errno = ENOMEM;
  }
  return v;
}

large_value::~large_value() { arena_.release(offset_, size_); }

void large_value::unref() noexcept {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

ssize_t large_value::read(uint64_t offset, char* buf, size_t len) const noexcept {
  if (offset >= size_) return 0;
  if (len > size_ - offset) len = static_cast<size_t>(size_ - offset);
  return arena_.read(offset_ + offset, buf, len);
}

bool large_value_ref::read_all(std::string& out) const {
  if (!v_) return false;
  out.resize(v_->size());
  return v_->read(0, out.data(), out.size()) == static_cast<ssize_t>(out.size());
}

}  // namespace ithaca::store
