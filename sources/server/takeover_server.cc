#include "takeover_server.h"

#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include <spdlog/spdlog.h>

namespace ithaca::server {

namespace {
constexpr mm::millis kHelloTimeout = 5000;
constexpr mm::millis kSyncPoll = 5;  // how often the sync's progress is looked at

// One line (without its '\n'), at most 256 bytes, before `deadline`. False
// at the end of the stream, an error, a timeout or a cancel (`*n` says which).
bool takeover_read_line(mm::io& io, std::string& line, int64_t deadline, ssize_t* n) {
  line.clear();
  for (;;) {
    char c = 0;
    *n = io.read(&c, 1, mm::millis_until(deadline));
    if (*n <= 0) return false;
    if (c == '\n') return true;
    if (line.size() >= 256) {
      *n = -EPROTO;
      return false;
    }
    line += c;
  }
}

std::string takeover_why(ssize_t n) {
  return n == 0 ? "it closed the connection" : n == -ETIMEDOUT ? "timed out" : std::strerror(static_cast<int>(-n));
}

void takeover_refuse(mm::io& io, const std::string& why) {
  const std::string line = "ERROR " + why + "\n";
  (void)io.write(line.data(), line.size(), 1000);
}

// The new process's pid as the kernel knows it (SO_PEERCRED); 0 if unknown.
pid_t takeover_peer_pid(const mm::io& io) {
  ucred peer{};
  socklen_t len = sizeof peer;
  return ::getsockopt(io.fd(), SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && peer.pid > 1 ? peer.pid : 0;
}

// The late failure: the new process failed after this one stopped serving
// and before its DONE. `kill_pid` (if not 0) is stopped first, so it cannot
// start serving after this one resumed; then this process serves again
// (pooler::resume_serving). Returns false (still serving).
bool takeover_resume(takeover_host& host, mm::io& io, pid_t kill_pid, const std::string& why) {
  if (kill_pid > 0 && ::kill(kill_pid, SIGKILL) != 0) {
    spdlog::error("takeover: kill {}: {}", kill_pid, std::strerror(errno));
  }
  io.close();  // the new process, if alive, sees its connection end
  host.resume_serving();
  spdlog::error("takeover: {} before taking over: still serving", why);
  return false;
}

// One new process's takeover. True once this process has handed over
// (finish() called); false, logged, when it still serves.
bool takeover_handle(std::unique_ptr<mm::io> io, int listener_fd, const std::string& path, takeover_host& host) {
  const int64_t started = mm::now_ns();
  const int64_t deadline = mm::deadline_after(static_cast<mm::millis>(host.timeout_ms));
  std::string hello;
  ssize_t n = 0;
  if (!takeover_read_line(*io, hello, mm::deadline_after(kHelloTimeout), &n)) {
    if (n != -ECANCELED)
      spdlog::warn("takeover: a peer on {} sent no hello ({}); still serving", path, takeover_why(n));
    return false;
  }
  if (!hello.starts_with(kTakeoverHello)) {
    takeover_refuse(*io, "expected '" + std::string(kTakeoverHello) + " PID'");
    spdlog::warn("takeover: a peer on {} said '{}', not a takeover; still serving", path, hello);
    return false;
  }
  const size_t pid_at = std::min(hello.size(), std::strlen(kTakeoverHello) + 1);
  const std::string who = "the new process (pid " + hello.substr(pid_at) + ")";
  spdlog::warn("takeover: {} asks for this process's place", who);
  std::vector<handed_fd> fds = host.descriptors();
  fds.push_back(handed_fd{"takeover", path, 0, listener_fd});
  int pair[2] = {-1, -1};
  if (host.fanout) {
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
      const std::string why = std::string("socketpair: ") + std::strerror(errno);
      takeover_refuse(*io, why);
      spdlog::error("takeover: {}; still serving", why);
      return false;
    }
    fds.push_back(handed_fd{"stream", "", 0, pair[1]});
  }
  std::string why;
  const bool sent = takeover_send_fds(io->fd(), fds, &why);
  if (pair[1] >= 0) ::close(pair[1]);  // the new process has its copy
  if (!sent) {
    if (pair[0] >= 0) ::close(pair[0]);
    spdlog::warn("takeover: {}: {}; still serving", who, why);
    return false;
  }
  std::shared_ptr<replication::takeover_link> link;
  if (host.fanout) {
    // The store: the new process is this fan-out's slave (initial sync,
    // then the stream) until the end mark.
    if (!host.fanout->running() && !host.fanout->start(host.machine)) {
      ::close(pair[0]);
      spdlog::error("takeover: the replication machine did not start; still serving");
      return false;
    }
    link = std::make_shared<replication::takeover_link>();
    host.fanout->attach_takeover(pair[0], link);
    // Both: the sync is in the slave's outbox, and the new process has
    // started everything but its listeners (READY): whatever may fail there
    // has not.
    bool ready = false;
    std::string said;
    for (;;) {
      if (link->synced.load() && ready) break;
      if (link->dropped.load()) {
        spdlog::warn("takeover: the stream to {} ended during its initial sync (see above); still serving", who);
        return false;
      }
      if (mm::now_ns() > deadline) {
        spdlog::warn("takeover: {} did not finish its initial sync within {} ms; still serving", who, host.timeout_ms);
        return false;  // it gives up at its own deadline and closes the stream
      }
      char c = 0;
      n = io->read(&c, 1, kSyncPoll);
      if (n == -ECANCELED) return false;
      if (n == 1 && c != '\n' && said.size() < 16) {
        said += c;
        continue;
      }
      if (n == 1 && said == "READY") {
        ready = true;
        said.clear();
        continue;
      }
      if (n != -ETIMEDOUT) {
        spdlog::warn("takeover: {} went away during the initial sync ({}); still serving", who,
                     n > 0 ? "it said '" + said + "'" : takeover_why(n));
        return false;
      }
    }
    spdlog::warn("takeover: the store is synced to {} ({} ms); it takes over now", who,
                 (mm::now_ns() - started) / 1000000);
  } else {
    // Nothing to move: both accept until the new one says it serves.
    std::string done;
    bool read = takeover_read_line(*io, done, deadline, &n);
    if (read && done == "READY") read = takeover_read_line(*io, done, deadline, &n);
    if (!read || done != "DONE") {
      if (n != -ECANCELED)
        spdlog::warn("takeover: {} did not say it serves ({}); still serving", who,
                     n > 0 ? "'" + done + "'" : takeover_why(n));
      return false;
    }
  }
  // From here to the new process's DONE neither process accepts (the kernel
  // queues connections on the listeners both hold). A failure in this
  // window makes this process serve again (takeover_resume).
  if (!host.stop_serving()) {
    // Without a store to move the new process has said DONE already: it
    // serves, and this one goes all the same.
    if (!link) spdlog::error("takeover: the workers did not stop within {} ms", host.timeout_ms);
    // With one, the new process waits for an end mark that will not come,
    // and gives up at its deadline.
    if (link) return takeover_resume(host, *io, 0,
                           who + " was sent away: the workers did not pause within " +
                               std::to_string(host.timeout_ms) + " ms");
  }
  if (link) {
    // A bound of its own: the sync may have used most of the first.
    const int64_t end_deadline = mm::deadline_after(static_cast<mm::millis>(host.timeout_ms));
    // Every acknowledged write is in the ring; the end mark follows them.
    bool marked = false;
    while (!(marked = host.fanout->end_takeover(*link))) {
      if (mm::now_ns() > end_deadline || mm::sleep(1) == mm::wait_status::Cancelled) break;
    }
    if (!marked) return takeover_resume(host, *io, 0, who + " was sent away: the stream's end mark found no room");
    // Its DONE, or its connection's end (it died), or the timeout.
    std::string done;
    if (!takeover_read_line(*io, done, end_deadline, &n) || done != "DONE") {
      if (n == -ECANCELED) return false;  // this process is shutting down
      // Alive but silent, or saying something else: it might serve yet, so
      // it is stopped; two processes never serve diverging stores.
      const pid_t kill = n == 0 ? 0 : takeover_peer_pid(*io);
      const std::string what = n == 0    ? "exited (its connection closed)"
                              : n > 0   ? "said '" + done + "', not DONE; it is killed"
                                        : "did not say DONE (" + takeover_why(n) + "); it is killed";
      return takeover_resume(host, *io, kill, who + " " + what);
    }
  }
  spdlog::warn("takeover: {} serves; handed over in {} ms, exiting", who, (mm::now_ns() - started) / 1000000);
  host.finish();
  return true;
}
}  // namespace

void takeover_serve(mm::io& listener, const std::string& path, takeover_host& host) {
  for (;;) {
    const int fd = listener.accept(mm::kForever);
    if (fd == -ECANCELED) return;
    if (fd < 0) {
      spdlog::warn("takeover: accept on {}: {}", path, std::strerror(-fd));
      if (mm::sleep(100) == mm::wait_status::Cancelled) return;
      continue;
    }
    std::unique_ptr<mm::io> io = mm::io::attach(fd);
    if (!io) {
      ::close(fd);
      continue;
    }
    if (takeover_handle(std::move(io), listener.fd(), path, host)) return;
  }
}

}  // namespace ithaca::server
