// One attached slave, as the fan-out machine sees it (private to fanout*.cc).
// [fan-out machine only: every field is read and written there, no lock]
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fanout.h"
#include "machinarium.h"
#include "outbox.h"
#include "tls_conn.h"

namespace ithaca::replication {

struct fanout::slave {
  explicit slave(uint64_t log_end) : out(log_end) {}
  ~slave() { tls.reset(); }  // the session before the socket it runs on

  uint32_t id = 0;
  std::string peer;
  std::unique_ptr<mm::io> io;
  // replication.tls: the session on io; the writer writes and the heartbeat
  // reader reads through it at once (net/tls_conn.h).
  std::unique_ptr<net::tls_conn> tls;
  outbox out;      // what it has yet to be sent (drain adds, writer sends)
  mm::cond ready;  // drain -> writer: out has bytes
  // Its backlog at the drain's previous check: a slave is dropped when over
  // send_buffer only if it was already half that behind then, so a single
  // record larger than the rest of its room does not drop a slave that keeps up.
  uint64_t checked_backlog = 0;
  bool syncing = true;  // initial sync not finished
  bool closed = false;
  uint64_t synced = 0;     // items received from the initial sync
  uint64_t asked = 0;      // the last position it was asked to confirm (ack: slave)
  uint64_t confirmed = 0;  // the highest position it confirmed
  int64_t joined_ns = 0;
  std::shared_ptr<takeover_link> takeover;  // the new process of a takeover; null for a slave
  mm::coroutine_id reader = 0, writer = 0, scan = 0;

  ssize_t read(void* buf, size_t len, mm::millis timeout) {
    return tls ? tls->read(buf, len, timeout) : io->read(buf, len, timeout);
  }
  // All of `spans` or an error; the whole write within `timeout`.
  ssize_t write(const std::vector<iovec>& spans, mm::millis timeout) {
    if (!tls) return io->writev(spans.data(), static_cast<int>(spans.size()), timeout);
    const int64_t deadline = mm::deadline_after(timeout);
    ssize_t total = 0;
    for (const iovec& v : spans) {
      const ssize_t n = tls->write(v.iov_base, v.iov_len, mm::millis_until(deadline));
      if (n < 0) return n;
      total += n;
    }
    return total;
  }
};

}  // namespace ithaca::replication
