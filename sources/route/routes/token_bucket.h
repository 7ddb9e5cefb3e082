// A token bucket shared by every worker, without a lock: the generic cell
// rate algorithm (one atomic "theoretical arrival time"). `rate` tokens a
// second, up to `burst` at once. Used by failover_limit and rate_limit.
// [any thread]
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "machinarium.h"

namespace ithaca::route {

class token_bucket {
 public:
  // rate <= 0: unlimited.
  token_bucket(double rate, double burst)
      : interval_ns_(rate > 0 ? static_cast<std::int64_t>(1e9 / rate) : 0),
        tolerance_ns_(rate > 0 ? static_cast<std::int64_t>(std::max(burst, 1.0) * 1e9 / rate) : 0) {}

  bool limited() const { return interval_ns_ > 0; }

  // Takes a token if one is there.
  bool take() {
    if (interval_ns_ == 0) return true;
    const std::int64_t now = mm::now_ns();
    std::int64_t tat = tat_.load(std::memory_order_relaxed);
    for (;;) {
      const std::int64_t start = std::max(tat, now);
      if (start - now + interval_ns_ > tolerance_ns_) return false;
      if (tat_.compare_exchange_weak(tat, start + interval_ns_, std::memory_order_relaxed)) return true;
    }
  }

 private:
  std::int64_t interval_ns_;
  std::int64_t tolerance_ns_;
  std::atomic<std::int64_t> tat_{0};
};

}  // namespace ithaca::route
