#include "unix_listener.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ithaca::server {

namespace {

const char* kInUse = "bind(): Address already in use";

// What lstat's mode names, for the refusal.
const char* kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a socket";
}

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

sockaddr_un address_of(const std::string& path) {
  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  std::memcpy(un.sun_path, path.data(), std::min(path.size(), sizeof(un.sun_path) - 1));
  return un;
}

// Whether a server accepts on the socket at `path`: a non-blocking connect
// is accepted into its backlog (or finds the backlog full, EAGAIN) if one
// listens, and is refused if nobody does. Unknown (e.g. EACCES) counts as
// live: then the path is not ours to remove.
bool accepting(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return true;
  const sockaddr_un un = address_of(path);
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&un), sizeof un);
  const int err = errno;
  ::close(fd);
  return rc == 0 || err != ECONNREFUSED;
}

// Clears the way for bind: nothing at `path`, or a stale socket removed.
bool clear_path(const std::string& path, std::string* error) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return true;
    return fail(error, path + ": " + std::strerror(errno));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return fail(error, std::string(kInUse) + ": " + path + " is " + kind_of(st.st_mode) +
                           ", not a socket; only a stale socket is replaced (remove it or choose another path)");
  }
  if (accepting(path)) {
    return fail(error,
                std::string(kInUse) + ": a server is accepting on " + path + " (only a stale socket is replaced)");
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return fail(error, path + ": cannot remove the stale socket: " + std::strerror(errno));
  }
  return true;
}

}  // namespace

std::unique_ptr<mm::io> listen_unix(const std::string& path, int backlog, unsigned mode, std::string* error) {
  if (path.empty() || path.size() >= sizeof(sockaddr_un::sun_path)) {
    fail(error, "unix socket path is empty or too long");
    return nullptr;
  }
  if (!clear_path(path, error)) return nullptr;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    fail(error, std::string("socket(): ") + std::strerror(errno));
    return nullptr;
  }
  // Linux creates the path with the socket's own mode less the umask, so
  // this bounds it by `mode` from the start; without it a umask of 000 made
  // the path 0777 until the chmod below.
  (void)::fchmod(fd, mode);
  const sockaddr_un un = address_of(path);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&un), sizeof un) != 0) {
    fail(error, std::string("bind(): ") + std::strerror(errno) + ": " + path);
    ::close(fd);
    return nullptr;
  }
  // Exactly `mode`: the umask may have cleared bits it asks for.
  if (::chmod(path.c_str(), mode) != 0) {
    fail(error, path + ": cannot set its mode: " + std::strerror(errno));
    ::unlink(path.c_str());
    ::close(fd);
    return nullptr;
  }
  if (::listen(fd, backlog) != 0) {
    fail(error, std::string("listen(): ") + std::strerror(errno) + ": " + path);
    ::unlink(path.c_str());
    ::close(fd);
    return nullptr;
  }
  auto io = mm::io::attach(fd);
  if (!io) {
    fail(error, std::string("attach: ") + std::strerror(errno));
    ::unlink(path.c_str());
    ::close(fd);
  }
  return io;
}

}  // namespace ithaca::server
