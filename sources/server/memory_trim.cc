#include "memory_trim.h"

#include <malloc.h>

#include <algorithm>

#include <spdlog/spdlog.h>

#include "machinarium.h"

namespace ithaca::server {

namespace {

// How often the connection count is sampled (the peak is a sample's).
constexpr mm::millis kSampleMs = 1000;
// The least time between two trims.
constexpr int64_t kMinIntervalMs = 5000;
// A trim the blocking pool has not finished by then is left to finish alone.
constexpr mm::millis kTrimTimeoutMs = 10000;

}  // namespace

void memory_trim_main(const conn_registry& conns) {
  uint64_t peak = conns.current();
  int64_t last_trim = mm::now_ns();
  // After a trim, one more once the interval has passed: the sessions that
  // served the clients linger a while (worker.h) before they free theirs.
  bool follow_up = false;
  for (;;) {
    if (mm::sleep(kSampleMs) == mm::wait_status::Cancelled) return;
    const uint64_t now = conns.current();
    peak = std::max(peak, now);
    const bool fell = peak > 0 && now * 2 <= peak;
    if (!fell && !follow_up) continue;
    if (mm::now_ns() - last_trim < kMinIntervalMs * 1000000) continue;
    if (mm::blocking_call([] { ::malloc_trim(0); }, kTrimTimeoutMs) == mm::wait_status::Cancelled) return;
    spdlog::debug("memory: clients {} -> {}: freed heap memory given back", peak, now);
    last_trim = mm::now_ns();
    follow_up = fell;
    peak = now;
  }
}

}  // namespace ithaca::server
