#include "memory_trim.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdio>

#include <algorithm>
#include <atomic>
#include <memory>

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
// Follow-up trims go on while each gives back at least this much, at most
// kMaxFollowUps in a row: what the clients used is freed over a while after
// they left (sessions linger, backend calls of a stopped server wait for
// their timeout, a reload's old tree drains), so one trim soon after the
// fall can miss most of it (a 30-minute stress run kept 50 MiB that way).
constexpr uint64_t kWorthwhileBytes = 1 << 20;
constexpr int kMaxFollowUps = 12;

// Resident bytes now (/proc/self/statm's second field); 0 if unreadable.
uint64_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return n == 2 ? static_cast<uint64_t>(resident) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

}  // namespace

void memory_trim_main(const conn_registry& conns) {
  uint64_t peak = conns.current();
  int64_t last_trim = mm::now_ns();
  // Trims still to come after the fall, while they give memory back.
  int follow_ups = 0;
  for (;;) {
    if (mm::sleep(kSampleMs) == mm::wait_status::Cancelled) return;
    const uint64_t now = conns.current();
    peak = std::max(peak, now);
    const bool fell = peak > 0 && now * 2 <= peak;
    if (!fell && follow_ups == 0) continue;
    if (mm::now_ns() - last_trim < kMinIntervalMs * 1000000) continue;
    // The statm reads run on the blocking pool too (a file read is a syscall
    // the pooler's machine does not make). The result is shared: a trim that
    // outlives its timeout must not write into this frame.
    auto given_back = std::make_shared<std::atomic<uint64_t>>(0);
    const mm::wait_status w = mm::blocking_call([given_back] {
          const uint64_t before = resident_bytes();
          ::malloc_trim(0);
          const uint64_t after = resident_bytes();
          given_back->store(before > after ? before - after : 0);
        }, kTrimTimeoutMs);
    if (w == mm::wait_status::Cancelled) return;
    const uint64_t given = given_back->load();
    spdlog::debug("memory: clients {} -> {}: {} KiB of freed heap given back", peak, now, given >> 10);
    last_trim = mm::now_ns();
    if (fell) {
      follow_ups = kMaxFollowUps;
    } else if (given < kWorthwhileBytes) {
      follow_ups = 0;
    } else {
      --follow_ups;
    }
    peak = now;
  }
}

}  // namespace ithaca::server
