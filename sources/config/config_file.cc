#include "config_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "fail.h"
#include "units.h"

namespace ithaca::config {

namespace {

// What st_mode names, for the refusal ("a FIFO").
const char* kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

std::string too_large(const std::string& path) {
  return path + " is larger than " + format_size(kMaxConfigFileSize) +
         ", the most a config file may hold; refusing to read it";
}

// Closes the descriptor on every way out.
struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

bool read_config_file(const std::string& path, std::string& text, std::string* error) {
  // O_NONBLOCK: a FIFO without a writer opens at once (and is refused below)
  // instead of waiting; on a regular file it changes nothing. O_NOCTTY: a
  // terminal named here does not become the process's controlling one.
  fd_guard f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (f.fd < 0) return fail(error, path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return fail(error, path + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    return fail(error, path + " is " + kind_of(st.st_mode) + ", not a regular file; refusing to read it");
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxConfigFileSize) return fail(error, too_large(path));
  // One byte past the cap tells a file that grew since the fstat.
  std::string out(static_cast<size_t>(st.st_size) + 1, '\0');
  size_t used = 0;
  for (;;) {
    if (used == out.size()) {
      if (out.size() > kMaxConfigFileSize) return fail(error, too_large(path));
      out.resize(std::min<size_t>(out.size() * 2, kMaxConfigFileSize + 1));
    }
    ssize_t n = ::read(f.fd, out.data() + used, out.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(error, path + ": cannot read: " + std::strerror(errno));
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  if (used > kMaxConfigFileSize) return fail(error, too_large(path));
  out.resize(used);
  text = std::move(out);
  return true;
}

}  // namespace ithaca::config
