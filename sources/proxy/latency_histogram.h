// Request latency per server, in log-spaced buckets (4 per power of two,
// from 1 us to ~70 s): enough for p50/p99/p999 within ~19%, and the sum of
// the latencies (for a Prometheus histogram's _sum). One histogram per worker
// per server (single writer: relaxed load+store), summed by `stats`.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <bit>
#include <cstdint>

namespace ithaca::proxy {

class latency_histogram {
 public:
  static constexpr int kSubBuckets = 4;
  static constexpr int kBuckets = 26 * kSubBuckets;

  // The bounds `stats latency` and the Prometheus page report, in us: the
  // usual ladder from 50 us to 5 s, each moved to the nearest upper bound of
  // a bucket (2^p * 5/4, 6/4, 7/4 or 2), so a cumulative count is exact.
  static constexpr std::array<uint64_t, 16> kExportBoundsUs = {
      48, 96, 256, 512, 1024, 2560, 5120, 10240, 24576, 49152, 98304, 262144, 524288, 1048576, 2621440, 5242880};

  // [the owning worker]
  void record(uint64_t micros) {
    std::atomic<uint64_t>& b = buckets_[bucket_of(micros)];
    b.store(b.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    sum_us_.store(sum_us_.load(std::memory_order_relaxed) + micros, std::memory_order_relaxed);
  }

  // Adds this histogram into `into` (a plain snapshot). [any thread]
  void add_to(std::array<uint64_t, kBuckets>& into) const {
    for (int i = 0; i < kBuckets; ++i) into[i] += buckets_[i].load(std::memory_order_relaxed);
  }
  uint64_t sum_us() const { return sum_us_.load(std::memory_order_relaxed); }  // [any thread]

  // How many values of a summed snapshot are below `bound_us`: the buckets
  // whose upper bound is at most it (exact when it is a bucket's bound).
  static uint64_t count_below(const std::array<uint64_t, kBuckets>& h, uint64_t bound_us) {
    uint64_t n = 0;
    for (int i = 0; i < kBuckets && upper_bound(i) <= bound_us; ++i) n += h[i];
    return n;
  }

  static int bucket_of(uint64_t micros) {
    if (micros < 1) micros = 1;
    const int power = 63 - std::countl_zero(micros);  // floor(log2)
    // The two bits below the top one pick the sub-bucket.
    const int sub =
        power >= 2 ? static_cast<int>((micros >> (power - 2)) & 3) : static_cast<int>((micros << (2 - power)) & 3);
    const int b = power * kSubBuckets + sub;
    return b < kBuckets ? b : kBuckets - 1;
  }
  // The upper bound of bucket b, in microseconds.
  static uint64_t upper_bound(int b) {
    const int power = b / kSubBuckets;
    const uint64_t base = uint64_t{1} << power;
    return base + ((base * static_cast<uint64_t>(b % kSubBuckets + 1)) / kSubBuckets);
  }
  // The q-quantile (0..1) of a summed snapshot, in microseconds; 0 if empty.
  static uint64_t quantile(const std::array<uint64_t, kBuckets>& h, double q) {
    uint64_t total = 0;
    for (uint64_t n : h) total += n;
    if (total == 0) return 0;
    const uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(total - 1)) + 1;
    uint64_t seen = 0;
    for (int i = 0; i < kBuckets; ++i) {
      seen += h[i];
      if (seen >= rank) return upper_bound(i);
    }
    return upper_bound(kBuckets - 1);
  }

 private:
  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
  std::atomic<uint64_t> sum_us_{0};
};

}  // namespace ithaca::proxy
