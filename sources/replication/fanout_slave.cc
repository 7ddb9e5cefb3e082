// The per-slave coroutines of the fan-out machine: the writer (outbox ->
// socket), the heartbeat reader and the initial-sync scan. Each waits only on
// its own slave (its socket, its outbox) and within a bound, so a slave that
// reads nothing stalls nobody but itself. [fan-out machine; no lock; the
// scan takes store bucket locks, one at a time, inside store::scan]
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "ack_reader.h"
#include "fanout.h"
#include "fanout_slave.h"
#include "large_value.h"

namespace ithaca::replication {

namespace {
constexpr mm::millis kSlaveIdleWait = 1000;  // a writer's wait for bytes (then looks again)
constexpr size_t kMaxSpans = 64;             // per write (io::writev's stack array)
constexpr uint64_t kScanStep = 1024;         // most buckets per scan call (one lock at a time)
}  // namespace

// Sends what the slave's outbox holds, in writes of at most write_bytes(),
// each within slave_timeout: a slave that takes nothing for that long is
// dropped ("not reading"). After each write it tells a paced drain there may
// be room. The spans point into the log's blocks (pinned for the write) and
// the outbox's own records, which nobody changes meanwhile.
void fanout::writer(slave_ptr s) {
  std::vector<iovec> spans;
  std::vector<stream_log::pin> pins;
  const auto timeout = static_cast<mm::millis>(settings_.slave_timeout_ms);
  for (;;) {
    // Dropped: stop, even if the socket still takes bytes (a write does not
    // wait then, so the cancel is not seen there); the log goes on growing
    // and is trimmed without regard to this slave's position.
    if (s->closed || mm::coroutine_cancelled()) return;
    spans.clear();
    pins.clear();
    const size_t n = s->out.gather(log_, write_bytes(), kMaxSpans, spans, pins);
    if (n == 0) {
      if (s->ready.wait(kSlaveIdleWait) == mm::wait_status::Cancelled) return;
      continue;
    }
    const ssize_t r = s->write(spans, timeout);
    if (r == -ECANCELED) return;
    if (r < 0) {
      drop(s, r == -ETIMEDOUT ? "not reading (write timed out)"
                              : std::string("write: ") + std::strerror(static_cast<int>(-r)));
      return;
    }
    s->out.consumed(n);
    counters_.bytes_sent.fetch_add(n, std::memory_order_relaxed);
    room_.signal();
  }
}

// A slave sends one byte every heartbeat interval (yrmcds: '\0'), which
// means nothing else, and (ack: slave) its confirmations. Silence for
// slave_timeout, the end of the stream, or a packet that is not a
// confirmation drops it.
void fanout::heartbeats(slave_ptr s) {
  char buf[512];
  ack_reader reader;
  for (;;) {
    ssize_t n = s->read(buf, sizeof buf, static_cast<mm::millis>(settings_.slave_timeout_ms));
    if (n > 0) {
      uint64_t confirmed = s->confirmed;
      if (reader.feed({buf, static_cast<size_t>(n)}, confirmed) != ack_reader::status::Ok) {
        drop(s, reader.error());
        return;
      }
      if (confirmed == s->confirmed) continue;
      if (confirmed > s->asked) {
        drop(s, "confirmed position " + std::to_string(confirmed) + ", which it was never asked for");
        return;
      }
      s->confirmed = confirmed;
      if (ack_) ack_->confirm(confirmed);
      continue;
    }
    if (n == -ECANCELED) return;
    drop(s, n == 0            ? "closed the connection"
            : n == -ETIMEDOUT ? "no heartbeat for " + std::to_string(settings_.slave_timeout_ms) + " ms"
                              : std::string("read: ") + std::strerror(static_cast<int>(-n)));
    return;
  }
}

// Copies every live item to slave `s` through the ring, one bucket lock at a
// time (store::scan holds it while the observer writes that bucket's
// records), while clients keep being served. Throttled so the ring keeps room
// for the workers' records and the slave's backlog stays in bounds: what the
// ring holds counts as the slave's (it may all be its sync records, bound for
// its outbox), so backlog + ring stay under half of send_buffer before each
// step, whatever the ring's size; and a step copies about a sixteenth of
// send_buffer (its bucket count halves after a step that copied more and
// doubles, up to kScanStep, after one that copied less than half), so one
// step of large items cannot push a slave that keeps up past send_buffer.
void fanout::initial_sync(slave_ptr s) {
  uint64_t next = 0;
  uint64_t buckets = kScanStep;
  const uint64_t budget = std::max<uint64_t>(settings_.send_buffer / 16, 4 << 10);
  uint64_t copied = 0;
  bool refused = false;
  auto visit = [this, &s, &refused, &copied](const store::item_view& v) {
    if (refused) return;
    if (!observer_.sync_item(v, s->id)) refused = true;
    copied += v.key.size() + (v.large ? v.large->size() : v.value.size());
  };
  store::store::scan_visitor visitor(visit);
  do {
    while (queue_.used() > queue_.capacity() / 4 || s->out.backlog(log_.end()) + queue_.used() > pace_limit()) {
      if (mm::sleep(1) == mm::wait_status::Cancelled || s->closed) return;
    }
    copied = 0;
    next = store_.scan(next, buckets, now_(), visitor);
    if (refused) {
      drop(s, "the replication queue was full during the initial sync");
      return;
    }
    if (copied > budget && buckets > 1) {
      buckets /= 2;
    } else if (copied < budget / 2 && buckets < kScanStep) {
      buckets *= 2;
    }
    mm::yield();
    if (mm::coroutine_cancelled() || s->closed) return;
  } while (next != 0);
  while (!observer_.sync_done(s->id)) {
    if (mm::sleep(1) == mm::wait_status::Cancelled || s->closed) return;
  }
}

}  // namespace ithaca::replication
