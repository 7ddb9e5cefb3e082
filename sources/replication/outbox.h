// What one slave has yet to be sent: its position in the shared stream log
// (stream_log.h) and its own records (its initial sync's items, requests to
// confirm, with `ack: slave`), each placed at the stream position the drain
// had reached when it met it. The slave's byte sequence is thus the ring's
// order exactly: the stream before that position, the own records, the
// stream after (the ordering invariant, INTERNALS "Replication").
//
// The writer takes the next bytes with gather() and, once they are written,
// calls consumed() with the count gather() returned. Own records already
// gathered are never modified (a later one at the same position is a new
// entry), so the spans of a write in progress stay valid.
//
// [fan-out machine only: the drain adds, the slave's writer gathers and
// consumes; no lock]
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "stream_log.h"

namespace ithaca::replication {

class outbox {
 public:
  // A slave joins at `position` (the log's end then): the stream from there.
  explicit outbox(uint64_t position) : position_(position) {}

  // Its own record `a` + `b`, to go at stream position `at` (the log's end
  // now; never less than the previous one's).
  void add_own(uint64_t at, std::string_view a, std::string_view b = {});

  // Bytes not yet written: the log from position() to `log_end`, and own
  // records. What counts against send_buffer.
  uint64_t backlog(uint64_t log_end) const { return log_end - position_ + own_bytes_; }
  bool empty(uint64_t log_end) const { return backlog(log_end) == 0; }
  // Its position in the shared log: the log before it may be trimmed.
  uint64_t position() const { return position_; }

  // The next write: at most `max_bytes` (> 0) in at most `max_spans` spans,
  // in the slave's order, with pins on the log blocks they use. Returns the
  // bytes added (0: nothing to send).
  size_t gather(const stream_log& log, size_t max_bytes, size_t max_spans, std::vector<iovec>& spans,
                std::vector<stream_log::pin>& pins);
  // The first `n` bytes of the last gather() were written.
  void consumed(size_t n);

 private:
  struct own {
    uint64_t at;  // the stream position it goes before
    std::string bytes;
    size_t sent = 0;        // bytes of it written
    bool gathered = false;  // a write may point into it: no more appends
  };
  std::deque<own> own_;  // by `at`, non-decreasing
  uint64_t position_;
  uint64_t own_bytes_ = 0;  // unsent own bytes
};

}  // namespace ithaca::replication
