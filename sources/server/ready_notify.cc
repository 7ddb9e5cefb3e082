// systemd's notification protocol, spoken directly (sd_notify(3), "The notification
// protocol"): one datagram of newline-separated assignments to the AF_UNIX socket named
// by $NOTIFY_SOCKET (a path, or an abstract name when it starts with '@'). libsystemd
// was linked for this alone, and it brought libgcrypt, liblzma, libzstd, liblz4 and
// libcap with it: about 1 MiB of every server's resident memory (issue 33).
#include "ready_notify.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

namespace ithaca::server {

namespace {

bool g_new_main_pid = false;  // written by the main thread before the pooler starts

constexpr int kBarrierTimeoutMs = 5000;

// The address $NOTIFY_SOCKET names; false (and `why`) if it names none this
// protocol speaks (unset: not started by systemd, not an error).
bool notify_address(sockaddr_un& addr, socklen_t& len, std::string& why) {
  const char* env = std::getenv("NOTIFY_SOCKET");
  if (!env || !*env) return false;
  const std::string_view path(env);
  if (path[0] != '/' && path[0] != '@') {
    why = "NOTIFY_SOCKET " + std::string(path) + ": not a socket path (vsock is not supported)";
    return false;
  }
  if (path.size() >= sizeof addr.sun_path) {
    why = "NOTIFY_SOCKET " + std::string(path) + ": too long";
    return false;
  }
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (path[0] == '@') addr.sun_path[0] = '\0';  // abstract: no terminating NUL counted
  len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + (path[0] == '/' ? 1 : 0));
  return true;
}

// Sends `message`, with `fd` attached (SCM_RIGHTS) when it is >= 0. 0, or -errno.
int notify_send(const sockaddr_un& addr, socklen_t len, std::string_view message, int fd) {
  const int s = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -errno;
  iovec iov{const_cast<char*>(message.data()), message.size()};
  msghdr msg{};
  msg.msg_name = const_cast<sockaddr_un*>(&addr);
  msg.msg_namelen = len;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  // A datagram on a local socket: it does not block.
  const int rc = ::sendmsg(s, &msg, MSG_NOSIGNAL) < 0 ? -errno : 0;
  ::close(s);
  return rc;
}

// The protocol's barrier: BARRIER=1 carrying a pipe's write end; systemd closes it once
// it has processed every earlier message, which the read end sees as a hang-up.
int notify_barrier(const sockaddr_un& addr, socklen_t len) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return -errno;
  const int sent = notify_send(addr, len, "BARRIER=1", p[1]);
  ::close(p[1]);
  if (sent < 0) {
    ::close(p[0]);
    return sent;
  }
  pollfd pfd{p[0], 0, 0};
  int n;
  do {
    n = ::poll(&pfd, 1, kBarrierTimeoutMs);
  } while (n < 0 && errno == EINTR);
  ::close(p[0]);
  if (n < 0) return -errno;
  return n == 0 ? -ETIMEDOUT : 0;
}

}  // namespace

void notify_as_new_main_pid() { g_new_main_pid = true; }

namespace {

// READY=1, with MAINPID= when this process takes (or takes back) the unit's main
// pid, then (barrier) waits until systemd has read it. [any thread]
void send_ready(bool main_pid, bool barrier) {
  sockaddr_un addr;
  socklen_t len = 0;
  std::string why;
  if (!notify_address(addr, len, why)) {
    if (!why.empty()) spdlog::warn("systemd notification: {}", why);
    return;
  }
  const std::string message = main_pid ? "READY=1\nMAINPID=" + std::to_string(::getpid()) : std::string("READY=1");
  if (const int rc = notify_send(addr, len, message, -1); rc < 0) {
    spdlog::warn("systemd notification {}: {}", main_pid ? "MAINPID" : "READY=1", std::strerror(-rc));
    return;
  }
  if (barrier) {
    if (const int b = notify_barrier(addr, len); b < 0)
      spdlog::warn("systemd notification barrier: {}", std::strerror(-b));
  }
}

}  // namespace

void notify_ready() {
  // After a takeover systemd must read the datagram before it sees the old process exit.
  send_ready(g_new_main_pid, g_new_main_pid);
}

void notify_main_pid_again() { send_ready(true, false); }

}  // namespace ithaca::server
