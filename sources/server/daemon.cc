#include "daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ithaca::server {

namespace {

constexpr char kReady = 'R';

// The child's end of the parent's pipe; -1 when not daemonized or once told.
// Set before any thread starts; taken once by daemon_ready.
std::atomic<int> ready_fd{-1};
bool keep_stdio_ = false;

int64_t now_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1'000'000;
}

bool to_dev_null(int fd) {
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) return false;
  const bool ok = ::dup2(null, fd) >= 0;
  ::close(null);
  return ok;
}

// The child's exit status, once it has exited (it closed the pipe without a
// word, so it is on its way out); polled, so even this wait has a bound.
[[noreturn]] void exit_as_child(pid_t child) {
  int status = 0;
  const int64_t deadline = now_ms() + 10'000;
  for (;;) {
    const pid_t r = ::waitpid(child, &status, WNOHANG);
    if (r == child) break;
    if (r < 0 && errno != EINTR) {
      std::fprintf(stderr, "ithaca: waitpid: %s\n", std::strerror(errno));
      std::fflush(stderr);
      _exit(EXIT_FAILURE);
    }
    if (now_ms() > deadline) {
      std::fprintf(stderr,
                   "ithaca: the daemon (pid %d) closed its pipe before its listeners were bound and "
                   "did not exit\n",
                   static_cast<int>(child));
      std::fflush(stderr);
      _exit(EXIT_FAILURE);
    }
    ::usleep(10'000);
  }
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    if (code == 0) {
      std::fprintf(stderr, "ithaca: the daemon exited before its listeners were bound\n");
      std::fflush(stderr);
      _exit(EXIT_FAILURE);
    }
    _exit(code);
  }
  std::fprintf(stderr, "ithaca: the daemon was killed by signal %d (%s) before its listeners were bound\n",
               WTERMSIG(status), strsignal(WTERMSIG(status)));
  std::fflush(stderr);
  _exit(EXIT_FAILURE);
}

// The parent: the child's byte (ready: exit 0), or the end of the pipe
// without it (the child failed: its status), or the timeout.
[[noreturn]] void wait_for_child(pid_t child, int fd) {
  const int64_t deadline = now_ms() + kDaemonReadyTimeoutMs;
  for (;;) {
    const int64_t left = deadline - now_ms();
    if (left <= 0) {
      std::fprintf(stderr,
                   "ithaca: the daemon (pid %d) has not bound its listeners within %d s; "
                   "leaving it to go on starting\n",
                   static_cast<int>(child), kDaemonReadyTimeoutMs / 1000);
      std::fflush(stderr);
      _exit(EXIT_FAILURE);
    }
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;  // the deadline is checked above
    char c = 0;
    const ssize_t r = ::read(fd, &c, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r == 1 && c == kReady) _exit(EXIT_SUCCESS);
    exit_as_child(child);  // EOF (or an error): the child ended without being ready
  }
}

}  // namespace

bool daemonize(bool keep_cwd, bool keep_stdio, std::string* error) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    if (error) *error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    if (error) *error = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return false;
  }
  if (pid > 0) {
    ::close(fds[1]);
    wait_for_child(pid, fds[0]);
  }
  ::close(fds[0]);
  if (::setsid() < 0) {
    if (error) *error = std::string("setsid: ") + std::strerror(errno);
    return false;
  }
  if (!keep_cwd && ::chdir("/") != 0) {
    if (error) *error = std::string("chdir /: ") + std::strerror(errno);
    return false;
  }
  keep_stdio_ = keep_stdio;
  if (!keep_stdio && (!to_dev_null(STDIN_FILENO) || !to_dev_null(STDOUT_FILENO))) {
    if (error) *error = std::string("/dev/null: ") + std::strerror(errno);
    return false;
  }
  ready_fd.store(fds[1]);
  return true;
}

void daemon_ready() {
  const int fd = ready_fd.exchange(-1);
  if (fd < 0) return;
  // Before the word, so the parent's stderr is let go when the parent exits.
  if (!keep_stdio_) {
    std::fflush(stderr);
    to_dev_null(STDERR_FILENO);
  }
  ssize_t r;
  do {
    r = ::write(fd, &kReady, 1);  // SIGPIPE is ignored: a parent gone is EPIPE
  } while (r < 0 && errno == EINTR);
  ::close(fd);
}

}  // namespace ithaca::server
