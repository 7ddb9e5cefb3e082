#include "large_arena.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

namespace ithaca::store {

namespace {

int open_unlinked(const std::string& dir) noexcept {
#ifdef O_TMPFILE
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  // EOPNOTSUPP / EISDIR / EINVAL: the filesystem or kernel lacks O_TMPFILE; fall back.
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return -1;
#endif
  std::string path = dir + "/ithaca-large-XXXXXX";
  std::vector<char> buf(path.begin(), path.end());
  buf.push_back('\0');
  int fd2 = ::mkostemp(buf.data(), O_CLOEXEC);
  if (fd2 < 0) return -1;
  ::unlink(buf.data());  // at once: the file lives only as long as the descriptor
  return fd2;
}

}  // namespace

std::unique_ptr<large_arena> large_arena::open(const std::string& dir, uint64_t limit) noexcept {
  const int fd = open_unlinked(dir);
  if (fd < 0) return nullptr;
  std::unique_ptr<large_arena> a(new (std::nothrow) large_arena(fd, limit));
  if (!a) {
    ::close(fd);
    errno = ENOMEM;
  }
  return a;
}

large_arena::~large_arena() { ::close(fd_); }

bool large_arena::allocate(uint64_t len, uint64_t& offset) noexcept {
  len = rounded(len);
  std::lock_guard lock(mutex_);
  if (used() + len > limit()) return false;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < len) continue;
    offset = it->first;
    const uint64_t rest = it->second - len;
    free_.erase(it);
    if (rest) {
      try {
        free_.emplace(offset + len, rest);
      } catch (...) {
        return false;  // out of memory for a map node: the extent stays lost until exit
      }
    }
    used_.fetch_add(len, std::memory_order_relaxed);
    return true;
  }
  // No free piece is big enough: grow the file. Its blocks stay within the budget (used_,
  // checked above; free pieces are punched out); its apparent size is held to twice the
  // budget, so fragmentation makes the caller evict rather than grow the file forever.
  if (end_ + len > 2 * limit()) return false;
  offset = end_;
  end_ += len;
  used_.fetch_add(len, std::memory_order_relaxed);
  return true;
}

void large_arena::release(uint64_t offset, uint64_t len) noexcept {
  len = rounded(len);
  // Blocks back to the filesystem before anyone may write the extent again.
  ::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset), static_cast<off_t>(len));
  std::lock_guard lock(mutex_);
  used_.fetch_sub(len, std::memory_order_relaxed);
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && offset + len == next->first) {
    len += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      len += prev->second;
      free_.erase(prev);
    }
  }
  if (offset + len == end_) {
    end_ = offset;  // the top of the file is free: lower the high-water mark instead
    return;
  }
  try {
    free_.emplace(offset, len);
  } catch (...) {
    // Out of memory for a map node: the extent stays unusable until exit (its blocks
    // are already punched out, so no disk is lost).
  }
}

bool large_arena::write(uint64_t offset, const char* data, uint64_t len) const noexcept {
  uint64_t done = 0;
  while (done < len) {
    ssize_t n = ::pwrite(fd_, data + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<uint64_t>(n);
  }
  return true;
}

ssize_t large_arena::read(uint64_t offset, char* buf, uint64_t len) const noexcept {
  uint64_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd_, buf + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
  }
  return static_cast<ssize_t>(done);
}

}  // namespace ithaca::store
