#include "stream.h"

#include <sys/socket.h>

#include <cerrno>

namespace ithaca::server {

ssize_t send_now(int fd, const void* buf, size_t len) {
  for (;;) {
    const ssize_t w = ::send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w >= 0) return w;
    if (errno == EINTR) continue;
    return errno == EWOULDBLOCK ? -EAGAIN : -errno;
  }
}

}  // namespace ithaca::server
