// fd_reserve: surviving a full descriptor table in an accept loop.
//
// When accept() fails with EMFILE/ENFILE the connection stays in the listen
// queue and the listener stays readable, so a plain retry spins (the log
// said "Too many open files" every 10 ms and every new client hung). The
// reserve holds one spare descriptor (/dev/null): on EMFILE it is closed, the
// pending connections are accepted with the freed slot and closed at once (a
// clean refusal the client sees as EOF, counted in rejected_connections), and
// the spare is opened again. One warning per kLogInterval says how many were
// refused meanwhile.
//
// Thread: the pooler machine only (its accept coroutines run one at a time).
#pragma once

#include <cstdint>
#include <string>

namespace ithaca::server {

class fd_reserve {
 public:
  static constexpr int64_t kLogIntervalMs = 10000;

  fd_reserve();
  ~fd_reserve();
  fd_reserve(const fd_reserve&) = delete;
  fd_reserve& operator=(const fd_reserve&) = delete;

  // After accept on `listen_fd` failed with EMFILE/ENFILE: refuses what waits
  // in its queue (at most a bounded batch) using the spare. Returns how many
  // were refused. `now_ms` is for the rate-limited log line.
  uint64_t refuse_pending(int listen_fd, const std::string& local, int error, int64_t now_ms);

 private:
  int spare_ = -1;
  int64_t last_log_ms_ = INT64_MIN / 2;
  uint64_t refused_since_log_ = 0;
};

}  // namespace ithaca::server
