// Addresses, listening/connecting sockets and socket options.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>

#include "internal.h"

namespace mm {

namespace {
bool parse_port(std::string_view text, uint16_t& port) {
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value > 65535) return false;
  port = static_cast<uint16_t>(value);
  return true;
}
}  // namespace

bool address::parse(std::string_view text, address& out, std::string* error) {
  out = address{};
  if (text.starts_with("unix:")) {
    std::string_view path = text.substr(5);
    auto* un = reinterpret_cast<sockaddr_un*>(&out.storage);
    if (path.empty() || path.size() >= sizeof(un->sun_path)) {
      if (error) *error = "unix socket path is empty or too long";
      return false;
    }
    un->sun_family = AF_UNIX;
    std::memcpy(un->sun_path, path.data(), path.size());
    out.length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + 1);
    return true;
  }
  std::string host;
  std::string_view port_text;
  if (text.starts_with("[")) {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      if (error) *error = "expected [ipv6]:port";
      return false;
    }
    host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      if (error) *error = "expected host:port";
      return false;
    }
    host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  uint16_t port;
  if (!parse_port(port_text, port)) {
    if (error) *error = "bad port '" + std::string(port_text) + "'";
    return false;
  }
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out.storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out.storage);
  if (host.empty() || host == "*") host = "0.0.0.0";
  if (host == "localhost") host = "127.0.0.1";
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    out.length = sizeof(sockaddr_in);
    return true;
  }
  if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    out.length = sizeof(sockaddr_in6);
    return true;
  }
  if (error) *error = "not a numeric address: '" + host + "' (resolve names with mm::resolve)";
  return false;
}

std::string address::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  switch (storage.ss_family) {
    case AF_INET: {
      auto* v4 = reinterpret_cast<const sockaddr_in*>(&storage);
      inet_ntop(AF_INET, &v4->sin_addr, buf, sizeof(buf));
      std::string out(buf);
      out.append(":").append(std::to_string(ntohs(v4->sin_port)));
      return out;
    }
    case AF_INET6: {
      auto* v6 = reinterpret_cast<const sockaddr_in6*>(&storage);
      inet_ntop(AF_INET6, &v6->sin6_addr, buf, sizeof(buf));
      // Built with append: GCC 12 warns falsely (-Wrestrict) on a + chain here.
      std::string out("[");
      out.append(buf).append("]:").append(std::to_string(ntohs(v6->sin6_port)));
      return out;
    }
    case AF_UNIX: return std::string("unix:") + reinterpret_cast<const sockaddr_un*>(&storage)->sun_path;
  }
  return "?";
}

address local_address(int fd) {
  address a;
  a.length = sizeof(a.storage);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a.storage), &a.length) < 0) a.length = 0;
  return a;
}

namespace {
std::string sys_error(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

int new_socket(const address& addr, int type) {
  return ::socket(addr.storage.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

// A socket bound to an IPv6 address takes IPv6 only (memcached's habit), so
// "0.0.0.0" and "::" can both be bound on one port.
void v6_only(int fd, const address& addr) {
  const int one = 1;
  if (addr.storage.ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
}
}  // namespace

std::unique_ptr<io> listen(const address& addr, int backlog, bool reuse_port, std::string* error) {
  int fd = new_socket(addr, SOCK_STREAM);
  if (fd < 0) {
    if (error) *error = sys_error("socket");
    return nullptr;
  }
  int one = 1;
  if (addr.storage.ss_family != AF_UNIX) {
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (reuse_port) set_reuseport(fd, true);
    v6_only(fd, addr);
  }
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr.storage), addr.length) < 0) {
    if (error) *error = sys_error(("bind " + addr.to_string()).c_str());
    ::close(fd);
    return nullptr;
  }
  if (::listen(fd, backlog) < 0) {
    if (error) *error = sys_error("listen");
    ::close(fd);
    return nullptr;
  }
  auto result = io::attach(fd);
  if (!result) {
    if (error) *error = sys_error("attach");
    ::close(fd);
  }
  return result;
}

std::unique_ptr<io> adopt_listener(int fd, std::string* error) {
  int accepting = 0;
  socklen_t len = sizeof accepting;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0) {
    if (error) *error = sys_error(("fd " + std::to_string(fd)).c_str());
    return nullptr;
  }
  if (!accepting) {
    if (error) *error = "fd " + std::to_string(fd) + " is not a listening socket";
    return nullptr;
  }
  // The socket came from another process: ours to own now, non-blocking and
  // not inherited by what this process starts.
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl < 0 || ::fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || ::fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
    if (error) *error = sys_error("fcntl");
    return nullptr;
  }
  auto result = io::attach(fd);
  if (!result && error) *error = sys_error("attach");
  return result;
}

int bind_udp_socket(const address& addr, bool reuse_port, std::string* error) {
  int fd = new_socket(addr, SOCK_DGRAM);
  if (fd < 0) {
    if (error) *error = sys_error("socket");
    return -1;
  }
  // UDP has no TIME_WAIT, and on UDP SO_REUSEADDR lets any other socket with
  // it bind the same port and take datagrams, so a reuseport group goes
  // without it: then only same-user SO_REUSEPORT sockets can join.
  int one = 1;
  if (!reuse_port) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  v6_only(fd, addr);
  // Set before bind: the kernel admits a socket to a reuseport group only if
  // every member had the option when it bound.
  if (reuse_port && set_reuseport(fd, true) < 0) {
    if (error) *error = sys_error("SO_REUSEPORT");
    ::close(fd);
    return -1;
  }
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr.storage), addr.length) < 0) {
    if (error) *error = sys_error(("bind udp " + addr.to_string()).c_str());
    ::close(fd);
    return -1;
  }
  return fd;
}

std::unique_ptr<io> bind_udp(const address& addr, std::string* error) {
  int fd = bind_udp_socket(addr, false, error);
  if (fd < 0) return nullptr;
  auto result = io::attach(fd);
  if (!result) {
    if (error) *error = sys_error("attach");
    ::close(fd);
  }
  return result;
}

std::unique_ptr<io> connect(const address& addr, millis timeout, int* err) {
  int fd = new_socket(addr, SOCK_STREAM);
  if (fd < 0) {
    if (err) *err = -errno;
    return nullptr;
  }
  auto conn = io::attach(fd);
  if (!conn) {
    if (err) *err = -errno;
    ::close(fd);
    return nullptr;
  }
  int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr.storage), addr.length);
  if (rc < 0 && errno != EINPROGRESS) {
    if (err) *err = -errno;
    return nullptr;
  }
  if (rc < 0) {
    // In progress: the socket becomes writable when the handshake ends, with
    // SO_ERROR telling how it ended.
    int64_t deadline = deadline_after(timeout);
    for (;;) {
      int so_error = 0;
      socklen_t len = sizeof(so_error);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
      if (so_error) {
        if (err) *err = -so_error;
        return nullptr;
      }
      sockaddr_storage peer;
      socklen_t peer_len = sizeof(peer);
      if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) == 0) break;
      wait_status s = conn->wait_writable(millis_until(deadline));
      if (s != wait_status::Ok) {
        if (err) *err = s == wait_status::Cancelled ? -ECANCELED : -ETIMEDOUT;
        return nullptr;
      }
    }
  }
  if (err) *err = 0;
  return conn;
}

int set_nodelay(int fd, bool on) {
  int v = on;
  return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v));
}

int set_reuseport(int fd, bool on) {
  int v = on;
  return setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &v, sizeof(v));
}

int set_keepalive(int fd, bool on, int idle_s, int interval_s, int count) {
  int v = on;
  if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, sizeof(v)) < 0) return -1;
  if (!on) return 0;
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof(idle_s));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof(interval_s));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
  return 0;
}

int set_user_timeout(int fd, millis timeout) {
  unsigned v = timeout <= 0 ? 0u : static_cast<unsigned>(std::min<millis>(timeout, INT_MAX));
  return setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &v, sizeof(v));
}

bool tcp_closed(int fd) {
  tcp_info info{};
  socklen_t len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) < 0 || len < 1) return false;
  return info.tcpi_state == TCP_CLOSE;
}

}  // namespace mm
