// One backend server's counters summed over the workers: what `stats pools`,
// `stats servers` and the router summary print, and what `stats reset` takes
// as its baseline (the per-worker counters themselves are never zeroed: each
// has a single writer, so the reset subtracts instead).
#pragma once

#include <array>
#include <cstdint>

#include "latency_histogram.h"
#include "reply_result.h"

namespace ithaca::proxy {

inline constexpr std::size_t kFailureKindCount = 7;  // failure_kind's values

struct server_totals {
  uint64_t requests = 0;
  uint64_t replies = 0;
  uint64_t connects = 0;
  uint64_t joined = 0;
  uint64_t idle_closes = 0;
  uint64_t late_replies = 0;
  uint64_t late_closes = 0;
  uint64_t transitions = 0;
  std::array<uint64_t, kFailureKindCount> failures{};
  std::array<uint64_t, protocol::kReplyResultCount> results{};  // by reply_result
  std::array<uint64_t, latency_histogram::kBuckets> latency{};
  uint64_t latency_sum_us = 0;

  uint64_t failures_total() const {
    uint64_t n = 0;
    for (uint64_t f : failures) n += f;
    return n;
  }

  // Counters only grow, so a later snapshot minus an earlier one is >= 0.
  server_totals& operator-=(const server_totals& base) {
    requests -= base.requests;
    replies -= base.replies;
    connects -= base.connects;
    joined -= base.joined;
    idle_closes -= base.idle_closes;
    late_replies -= base.late_replies;
    late_closes -= base.late_closes;
    transitions -= base.transitions;
    for (std::size_t i = 0; i < failures.size(); ++i) failures[i] -= base.failures[i];
    for (std::size_t i = 0; i < results.size(); ++i) results[i] -= base.results[i];
    for (std::size_t i = 0; i < latency.size(); ++i) latency[i] -= base.latency[i];
    latency_sum_us -= base.latency_sum_us;
    return *this;
  }
};

}  // namespace ithaca::proxy
