// mcrouter's ExponentialSmoothData<WINDOW>: the first sample as it is, then
// each sample weighs 1/WINDOW against the value so far.
// smoothed_latency: a server's recent reply latency as mcrouter's
// ProxyDestination keeps it (window 16). `stats servers` in mcrouter's form
// prints it as avg_latency_us (server/mcrouter_servers.cc). One per worker
// per server. [single writer: the owning worker (relaxed load + store);
// any thread reads]
#pragma once

#include <atomic>
#include <cmath>

namespace ithaca::proxy {

template <unsigned Window>
class smoothed_mean {
 public:
  static_assert(Window > 0);
  static constexpr double kWindow = Window;

  // [the owning worker]
  void add(double micros) {
    const double v = value_.load(std::memory_order_relaxed);
    value_.store(std::isnan(v) ? micros : (micros + (kWindow - 1) * v) / kWindow, std::memory_order_relaxed);
  }
  // No reply yet: mcrouter leaves such a destination out of its average.
  bool has_value() const { return !std::isnan(value_.load(std::memory_order_relaxed)); }
  double value() const {
    const double v = value_.load(std::memory_order_relaxed);
    return std::isnan(v) ? 0.0 : v;
  }

 private:
  std::atomic<double> value_{NAN};
};

using smoothed_latency = smoothed_mean<16>;

}  // namespace ithaca::proxy
