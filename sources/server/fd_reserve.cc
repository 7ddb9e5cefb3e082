#include "fd_reserve.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace ithaca::server {

namespace {
// Connections refused per call: the listen queue is drained in bounded steps
// (the accept loop comes back when the listener is readable again).
constexpr int kMaxRefusedPerCall = 256;

int open_spare() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }
}  // namespace

fd_reserve::fd_reserve() : spare_(open_spare()) {}

fd_reserve::~fd_reserve() {
  if (spare_ >= 0) ::close(spare_);
}

uint64_t fd_reserve::refuse_pending(int listen_fd, const std::string& local, int error, int64_t now_ms) {
  uint64_t refused = 0;
  if (spare_ >= 0) {
    ::close(spare_);
    spare_ = -1;
  }
  for (int i = 0; i < kMaxRefusedPerCall; ++i) {
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) break;  // EAGAIN: the queue is empty (or still no slot: the caller backs off)
    ::close(fd);
    ++refused;
  }
  spare_ = open_spare();
  refused_since_log_ += refused;
  if (now_ms - last_log_ms_ >= kLogIntervalMs) {
    spdlog::warn("accept on {}: {}; refused {} connection(s) since the last report (descriptor table full)", local,
                 std::strerror(error), refused_since_log_);
    last_log_ms_ = now_ms;
    refused_since_log_ = 0;
  }
  return refused;
}

bool fd_reserve::keep_spare_before(int fd) {
  if (spare_ >= 0) return true;
  spare_ = open_spare();
  if (spare_ >= 0) return true;
  ::close(fd);
  spare_ = open_spare();
  return false;
}

}  // namespace ithaca::server
