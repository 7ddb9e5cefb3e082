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
// The freed slot can be taken by another thread before the spare is opened
// again (a worker opening a backend socket; under the sanitizers, UBSan's
// pipe probe), and the next accept then fills it with a client: the reserve
// would be gone while the table stays full, and the queue would wait instead
// of being refused. So after each accept, a lost spare is restored first, by
// giving up that connection's slot if nothing else is free.
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

  // After accept returned `fd`: when the spare is lost and the table has no
  // slot to open it again, closes `fd` to make one (the caller counts it as
  // refused) and returns false. True: `fd` is the caller's to serve.
  bool keep_spare_before(int fd);

 private:
  int spare_ = -1;
  int64_t last_log_ms_ = INT64_MIN / 2;
  uint64_t refused_since_log_ = 0;
};

}  // namespace ithaca::server
