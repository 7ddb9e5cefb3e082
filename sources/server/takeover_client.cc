#include "takeover_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>

#include <spdlog/spdlog.h>

#include "slave.h"
#include "udp_buffers.h"

namespace ithaca::server {

namespace {
// The address as machinarium prints it, so "*"'s halves and the old
// process's bound addresses compare equal.
std::string takeover_address_key(const std::string& text) {
  mm::address a;
  std::string error;
  return mm::address::parse(text, a, &error) ? a.to_string() : text;
}
}  // namespace

bool takeover_connect(const std::string& path, uint64_t timeout_ms, takeover_handoff& out, std::string* why) {
  sockaddr_un sa{};
  if (path.empty() || path.size() >= sizeof sa.sun_path) {
    *why = path.empty() ? "no takeover socket (set takeover.socket or --takeover-socket)"
                        : "takeover socket path too long: " + path;
    return false;
  }
  sa.sun_family = AF_UNIX;
  std::memcpy(sa.sun_path, path.c_str(), path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *why = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  // A unix connect waits while the listener's queue is full, and a send
  // while the peer's buffer is: both within the timeout.
  const timeval tv{static_cast<time_t>(timeout_ms / 1000), static_cast<suseconds_t>(timeout_ms % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
    *why = "cannot connect to the takeover socket " + path + ": " + std::strerror(errno) +
           " (is an ithaca with the same takeover socket running?)";
    ::close(fd);
    return false;
  }
  const std::string hello = std::string(kTakeoverHello) + " " + std::to_string(::getpid()) + "\n";
  if (::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(hello.size())) {
    *why = std::string("send: ") + std::strerror(errno);
    ::close(fd);
    return false;
  }
  std::vector<handed_fd> fds;
  if (!takeover_recv_fds(fd, static_cast<int>(timeout_ms), fds, why)) {
    ::close(fd);
    return false;
  }
  out = takeover_handoff{};
  out.control = fd;
  ucred peer{};
  socklen_t len = sizeof peer;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0) out.old_pid = peer.pid;
  for (handed_fd& f : fds) {
    if (f.kind == "stream") {
      out.stream = f.fd;
    } else if (f.kind == "takeover") {
      out.takeover_listener = f.fd;
      out.takeover_path = f.address;
    } else if (f.kind == "udp") {
      out.udp.push_back(f);
    } else {
      out.listeners.push_back(f);
    }
  }
  spdlog::warn("takeover: connected to the running process on {}: {} listeners, {} udp sockets{}", path,
               out.listeners.size(), out.udp.size(), out.stream >= 0 ? ", its store follows" : "");
  return true;
}

int takeover_take_listener(takeover_handoff& h, size_t index, const std::string& address) {
  for (handed_fd& f : h.listeners) {
    if (f.fd < 0 || f.index != index || f.address != address) continue;
    const int fd = f.fd;
    f.fd = -1;
    return fd;
  }
  return -1;
}

bool takeover_udp(takeover_handoff& h, const std::vector<std::string>& addresses, unsigned workers,
                  std::vector<std::vector<udp_socket>>& out) {
  out.assign(workers, {});
  for (const std::string& text : addresses) {
    const std::string key = takeover_address_key(text);
    std::vector<int> theirs;
    for (handed_fd& f : h.udp) {
      if (f.fd >= 0 && takeover_address_key(f.address) == key) {
        theirs.push_back(f.fd);
        f.fd = -1;
      }
    }
    const size_t total = std::max<size_t>(theirs.size(), workers);
    for (size_t i = 0; i < total; i++) {
      int fd = i < theirs.size() ? theirs[i] : -1;
      if (fd < 0) {
        // More workers than the old process had: one more socket in the
        // same SO_REUSEPORT group (the old one still holds the port).
        mm::address addr;
        std::string error;
        if (mm::address::parse(text, addr, &error)) fd = mm::bind_udp_socket(addr, true, &error);
        if (fd < 0) {
          spdlog::error("listen udp {}: {}", text, error);
          return false;
        }
        size_udp_buffers(fd);
      }
      out[i % workers].push_back(udp_socket{fd, mm::local_address(fd).to_string()});
    }
    if (!out.empty() && !out[0].empty())
      spdlog::warn("listening on udp {} ({} taken over)", out[0].back().local, theirs.size());
  }
  return true;
}

bool takeover_receive_store(takeover_handoff& h, const mm::machine_config& mc, uint64_t timeout_ms, store::store& st,
                            std::function<store::store_now()> now, replication::repl_counters& counters,
                            std::string* why) {
  if (h.stream < 0) return true;
  const int fd = h.stream;
  h.stream = -1;  // the follow owns it
  replication::slave_settings ss;
  ss.heartbeat_interval_ms = 100;  // the old process drops a slave silent for its slave_timeout
  ss.max_value = st.item_size_max();
  const int64_t started = mm::now_ns();
  const int64_t deadline = started + static_cast<int64_t>(timeout_ms) * 1000000;
  auto result = std::make_shared<std::promise<std::pair<bool, std::string>>>();
  std::future<std::pair<bool, std::string>> done = result->get_future();
  mm::machine_config tc = mc;
  tc.name = "takeover";
  store::store* sp = &st;
  mm::machine* m = mm::machine_create(tc, [fd, ss, sp, now, &counters, deadline, result] {
    std::string reason;
    const bool ok = replication::takeover_follow(fd, ss, *sp, now, counters, deadline, &reason);
    result->set_value({ok, reason});
  });
  if (!m) {
    ::close(fd);
    *why = "the takeover machine did not start";
    return false;
  }
  // The follow ends at its deadline (it looks at it every read wait); a
  // second more for it to notice.
  bool ok = false;
  if (done.wait_for(std::chrono::milliseconds(timeout_ms + 2000)) == std::future_status::ready) {
    auto [follow_ok, reason] = done.get();
    ok = follow_ok;
    *why = reason;
  } else {
    *why = "the store's stream did not end in time";
  }
  mm::machine_stop(m);
  mm::machine_join(m);
  if (ok) {
    spdlog::warn("takeover: received the store: {} items in {} ms", st.stats().curr_items,
                 (mm::now_ns() - started) / 1000000);
  }
  return ok;
}

bool takeover_ready(takeover_handoff& h, std::string* why) {
  static constexpr char kReady[] = "READY\n";
  if (::send(h.control, kReady, sizeof kReady - 1, MSG_NOSIGNAL) == sizeof kReady - 1) return true;
  *why = std::string("could not tell the old process: ") + std::strerror(errno);
  return false;
}

void takeover_done(takeover_handoff& h) {
  if (h.control >= 0) {
    static constexpr char kDone[] = "DONE\n";
    if (::send(h.control, kDone, sizeof kDone - 1, MSG_NOSIGNAL) < 0)
      spdlog::warn("takeover: could not tell the old process: {}", std::strerror(errno));
  }
  takeover_close(h);
}

void takeover_close(takeover_handoff& h) {
  for (int* fd : {&h.control, &h.stream, &h.takeover_listener}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  for (auto* list : {&h.listeners, &h.udp}) {
    for (handed_fd& f : *list) {
      if (f.fd >= 0) ::close(f.fd);
      f.fd = -1;
    }
  }
}

}  // namespace ithaca::server
