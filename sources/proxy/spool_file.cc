#include "spool_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "spool_dir.h"

namespace ithaca::proxy {

namespace {

int open_append(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

}  // namespace

int spool_open(const std::string& dir, const std::string& path, std::string* why) {
  int fd = open_append(path);
  if (fd >= 0) return fd;
  if (errno != ENOENT) {
    *why = std::strerror(errno);
    return -1;
  }
  if (!config::make_spool_dir(dir, why)) return -1;
  fd = open_append(path);
  if (fd < 0) *why = std::strerror(errno);
  return fd;
}

bool spool_append(int fd, uint64_t size, std::string_view record, std::string* why) {
  while (!record.empty()) {
    const ssize_t n = ::write(fd, record.data(), record.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *why = n < 0 ? std::strerror(errno) : "the write took nothing";
      // The part written, if any, goes: the next record starts at `size`.
      if (::ftruncate(fd, static_cast<off_t>(size)) != 0)
        *why += std::string("; and cutting back: ") + std::strerror(errno);
      return false;
    }
    record.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool spool_sync(int fd, uint64_t synced_size, std::string* why) {
  if (::fdatasync(fd) == 0) return true;
  *why = std::strerror(errno);
  if (::ftruncate(fd, static_cast<off_t>(synced_size)) != 0)
    *why += std::string("; and cutting back: ") + std::strerror(errno);
  return false;
}

}  // namespace ithaca::proxy
