// store_now: the caller's notion of time, passed on every store call so tests control time.
//
// The server keeps a monotonic "server time" (memcached's current_time) in milliseconds since
// start, and the unix time at which server time was 0 (wall_base) to convert absolute
// exptimes. Seconds drive expiry; milliseconds drive leases (their hot-key interval is short).
#pragma once

#include <cstdint>
#include <limits>

namespace ithaca::store {

struct store_now {
  uint64_t ms = 0;        // monotonic server time, milliseconds since start
  int64_t wall_base = 0;  // unix time (seconds) at server time 0
};

// Internal deadlines are server seconds offset by kTimeBase (as memcached starts current_time
// at 2), so that the deadline value 1 always means "already expired" and 0 means "never".
inline constexpr uint32_t kTimeBase = 2;
inline constexpr uint32_t kNever = 0;
inline constexpr uint32_t kExpiredNow = 1;
// memcached's REALTIME_MAXDELTA: larger exptimes are absolute unix times.
inline constexpr int64_t kMaxRelativeExptime = 60 * 60 * 24 * 30;

inline uint32_t server_sec(const store_now& now) noexcept { return static_cast<uint32_t>(now.ms / 1000) + kTimeBase; }

// Converts a client exptime (memcached rules) to an internal deadline:
// 0 never; negative: already expired; 1..30 days: relative; larger: absolute unix time
// (already expired if not in the future).
inline uint32_t to_deadline(int64_t exptime, const store_now& now) noexcept {
  const uint32_t sec = server_sec(now);
  if (exptime == 0) return kNever;
  if (exptime < 0) return kExpiredNow;
  int64_t deadline;
  if (exptime <= kMaxRelativeExptime)
    deadline = int64_t{sec} + exptime;
  else
    deadline = exptime - now.wall_base + kTimeBase;
  if (deadline <= int64_t{sec}) return kExpiredNow;
  constexpr int64_t kMax = std::numeric_limits<uint32_t>::max();
  return static_cast<uint32_t>(deadline > kMax ? kMax : deadline);
}

inline bool deadline_passed(uint32_t deadline, uint32_t sec) noexcept { return deadline != kNever && deadline <= sec; }

// Remaining seconds to live, -1 for "never expires" (meta t flag semantics).
inline int64_t ttl_remaining(uint32_t deadline, uint32_t sec) noexcept {
  if (deadline == kNever) return -1;
  return deadline > sec ? int64_t{deadline} - sec : 0;
}

// Deadline back to a unix time (for replication records), 0 for never.
inline int64_t deadline_to_unix(uint32_t deadline, int64_t wall_base) noexcept {
  return deadline == kNever ? 0 : int64_t{deadline} - kTimeBase + wall_base;
}

}  // namespace ithaca::store
