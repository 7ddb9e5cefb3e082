// Gives freed heap memory back to the kernel once the clients that used it
// are gone. glibc keeps what a burst of clients freed (reply buffers, large
// values read from backends, request slots) in its arenas: after 100 clients
// of the router's stress run left, RSS stayed about 125 MiB above its start,
// of which malloc_trim(0) returned 80 MiB. Trimming costs a walk of every
// arena's free chunks under that arena's lock, so it runs only when the
// number of client connections has fallen to half its recent peak (or to
// none), at most once per kMinIntervalMs, on the blocking pool (the pooler's
// machine never waits on it beyond its own coroutine).
#pragma once

#include <cstdint>

#include "conn_registry.h"

namespace ithaca::server {

// memory_trim_main's decision, apart from its clock and the trim itself (so
// a unit test can drive it): each sample of the connection count says whether
// a trim is due, and each trim's result what comes next. [the "memory trim"
// coroutine]
class trim_policy {
 public:
  // The least time between two trims (and from the start to the first).
  static constexpr int64_t kMinIntervalNs = 5'000'000'000;
  // Follow-up trims go on while each gives back at least this much, at most
  // kMaxFollowUps in a row: what the clients used is freed over a while after
  // they left (sessions linger, backend calls of a stopped server wait for
  // their timeout, a reload's old tree drains), so one trim soon after the
  // fall can miss most of it (a 30-minute stress run kept 50 MiB that way).
  static constexpr uint64_t kWorthwhileBytes = 1 << 20;
  static constexpr int kMaxFollowUps = 12;

  trim_policy(uint64_t conns, int64_t now_ns) : peak_(conns), last_trim_ns_(now_ns) {}

  // A sample: `conns` client connections at `now_ns`. True when a trim is
  // due: the count fell to half its peak since the last trim (or to none
  // from some), or follow-ups remain, and kMinIntervalNs passed since the
  // last trim.
  bool due(uint64_t conns, int64_t now_ns);
  // The trim that due() asked for gave back `given` bytes and ended at
  // `now_ns`; the sample it followed becomes the new peak.
  void trimmed(uint64_t given, int64_t now_ns);

  uint64_t peak() const { return peak_; }
  int follow_ups() const { return follow_ups_; }

 private:
  uint64_t peak_;
  int64_t last_trim_ns_;
  int follow_ups_ = 0;   // trims still to come after the fall, while they give memory back
  uint64_t sample_ = 0;  // the last sample's count
  bool fell_ = false;    // the last sample was a fall
};

// [the pooler machine; its "memory trim" coroutine] Runs until cancelled.
void memory_trim_main(const conn_registry& conns);

}  // namespace ithaca::server
