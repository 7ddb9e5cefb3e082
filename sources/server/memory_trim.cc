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
// A trim the blocking pool has not finished by then is left to finish alone.
constexpr mm::millis kTrimTimeoutMs = 10000;

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

bool trim_policy::due(uint64_t conns, int64_t now_ns) {
  sample_ = conns;
  peak_ = std::max(peak_, conns);
  fell_ = peak_ > 0 && conns * 2 <= peak_;
  if (!fell_ && follow_ups_ == 0) return false;
  return now_ns - last_trim_ns_ >= kMinIntervalNs;
}

void trim_policy::trimmed(uint64_t given, int64_t now_ns) {
  last_trim_ns_ = now_ns;
  if (fell_) {
    follow_ups_ = kMaxFollowUps;
  } else if (given < kWorthwhileBytes) {
    follow_ups_ = 0;
  } else {
    --follow_ups_;
  }
  peak_ = sample_;
}

void memory_trim_main(const conn_registry& conns) {
  trim_policy policy(conns.current(), mm::now_ns());
  for (;;) {
    if (mm::sleep(kSampleMs) == mm::wait_status::Cancelled) return;
    const uint64_t now = conns.current();
    if (!policy.due(now, mm::now_ns())) continue;
    // The statm reads run on the blocking pool too (a file read is a syscall
    // the pooler's machine does not make). The result is shared: a trim that
    // outlives its timeout must not write into this frame.
    auto given_back = std::make_shared<std::atomic<uint64_t>>(0);
    const mm::wait_status w = mm::blocking_call(
        [given_back] {
          const uint64_t before = resident_bytes();
          ::malloc_trim(0);
          const uint64_t after = resident_bytes();
          given_back->store(before > after ? before - after : 0);
        },
        kTrimTimeoutMs);
    if (w == mm::wait_status::Cancelled) return;
    const uint64_t given = given_back->load();
    spdlog::debug("memory: clients {} -> {}: {} KiB of freed heap given back", policy.peak(), now, given >> 10);
    policy.trimmed(given, mm::now_ns());
  }
}

}  // namespace ithaca::server
