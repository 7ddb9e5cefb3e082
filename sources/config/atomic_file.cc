#include "atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ithaca::config {

namespace {

bool atomic_file_fail(std::string* error, const std::string& what) {
  if (error) *error = what + ": " + std::strerror(errno);
  return false;
}

}  // namespace

bool make_directories(const std::string& dir, std::string* error) {
  if (dir.empty()) return true;
  std::string part;
  for (std::size_t at = 0; at != std::string::npos;) {
    const std::size_t slash = dir.find('/', at + 1);
    part = dir.substr(0, slash);
    at = slash;
    if (part.empty() || part == "/") continue;
    if (::mkdir(part.c_str(), 0777) == 0 || errno == EEXIST) continue;
    return atomic_file_fail(error, part);
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return atomic_file_fail(error, dir);
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return atomic_file_fail(error, dir);
  }
  return true;
}

bool write_file_atomically(const std::string& path, const std::string& text, unsigned mode, std::string* error) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return atomic_file_fail(error, tmp);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      errno = saved;
      return atomic_file_fail(error, tmp);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    return atomic_file_fail(error, path);
  }
  return true;
}

}  // namespace ithaca::config
