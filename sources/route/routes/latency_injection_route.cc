// The `latency_injection` route (mcrouter's LatencyInjectionRoute): waits
// `before` ms, sends the request to its child, waits `after` ms once the
// child answered, then pads the whole to `total` ms if it took less (a
// fixed `total`, or one drawn per request from `total_percentiles`, a step
// function of [percentile, ms] pairs, as mcrouter samples it).
//
// A wait is a timed step (step_timers.h, through the worker's async
// runner): the slot holds one call that the runner's coroutine ends at the
// deadline, so a waiting request blocks neither the worker nor the other
// requests of its client, which are sent meanwhile (their replies still
// leave in order). Every wait is bounded (each option at most 60 s) and ends
// at once when the worker stops. A request the runner cannot hold (over its
// bound, or none: a cache-role UDP loop) goes on without that wait, counted
// in latency_skipped.
//
// mcrouter's request_payload_latency reads per-request latencies from
// fields of its Carbon requests; memcached's protocols have none, so the
// option is accepted and changes nothing (as in mcrouter for a memcache
// request).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "async_runner.h"
#include "machinarium.h"
#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "units.h"
#include "yaml_section.h"

namespace ithaca::route {

namespace {

// Each wait's bound: far below the request loop's wait limit
// (kInflightWaitLimitMs), so a slot never outlives its client's patience.
constexpr std::uint32_t kLatencyMaxMs = 60'000;

struct latency_options final : config::route_options {
  std::uint32_t before_ms = 0;
  std::uint32_t after_ms = 0;
  std::uint32_t total_ms = 0;
  std::vector<std::pair<double, std::uint32_t>> total_percentiles;  // (percentile, ms), increasing
  bool request_payload = false;                                     // mcrouter's; no effect
  std::uint32_t max_request_latency_us = 0;                         // mcrouter's; no effect
};

class latency_injection_route final : public route {
 public:
  latency_injection_route(std::string name, const route& child, const latency_options& o)
      : route(std::move(name)),
        child_(child),
        before_ms_(o.before_ms),
        after_ms_(o.after_ms),
        total_ms_(o.total_ms),
        percentiles_(o.total_percentiles) {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "latency_injection"; }
  std::vector<const route*> children() const override { return {&child_}; }
  void kind_counters(const counter_out& out) const override {
    out("before_latency_injected", before_.load(std::memory_order_relaxed));
    out("after_latency_injected", after_.load(std::memory_order_relaxed));
    out("total_latency_injected", total_.load(std::memory_order_relaxed));
    out("latency_skipped", skipped_.load(std::memory_order_relaxed));
  }

 private:
  // The frame's state: which wait (or the child) the slot is in.
  enum step : std::uint32_t {
    Before,  // waiting before the child is asked
    Child,   // the child's calls are out
    After,   // waiting after the child answered
    Total,   // padding up to the total
  };
  // Starts the wait of `ms` in step `s`: true when the slot now waits.
  bool wait(request_slot& slot, dispatch_env& env, step s, std::uint32_t ms, std::atomic<std::uint64_t>& count) const;
  // The step after the child answered (or after the `after` wait).
  dispatch_status after_child(request_slot& slot, dispatch_env& env, bool after_done) const;
  std::uint32_t sample_total() const;

  const route& child_;
  std::uint32_t before_ms_, after_ms_, total_ms_;
  std::vector<std::pair<double, std::uint32_t>> percentiles_;
  // Relaxed counters, any worker (mcrouter's stats of the same names).
  mutable std::atomic<std::uint64_t> before_{0}, after_{0}, total_{0}, skipped_{0};
};

}  // namespace

std::uint32_t latency_injection_route::sample_total() const {
  if (total_ms_ > 0 || percentiles_.empty()) return total_ms_;
  thread_local std::minstd_rand rng{std::random_device{}()};
  const double r = std::uniform_real_distribution<double>(0.0, 100.0)(rng);
  for (const auto& [pct, ms] : percentiles_) {
    if (r < pct) return ms;
  }
  return percentiles_.back().second;
}

bool latency_injection_route::wait(request_slot& slot, dispatch_env& env, step s, std::uint32_t ms,
                                   std::atomic<std::uint64_t>& count) const {
  if (ms == 0) return false;
  if (env.async == nullptr || !env.async->delay(slot, static_cast<mm::millis>(ms))) {
    route_counters::add(skipped_);
    return false;
  }
  route_counters::add(count);
  slot.top_frame().state = s;
  return true;
}

dispatch_status latency_injection_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  // saved: when the request reached this route (the total's start);
  // count: the total sampled for it.
  slot.push_frame({this, Before, sample_total(), mm::deadline_after(0)});
  if (!wait(slot, env, Before, before_ms_, before_)) {
    slot.top_frame().state = Child;
    dispatch_child(child_, slot, env);
  }
  return dispatch_status::Pending;
}

dispatch_status latency_injection_route::after_child(request_slot& slot, dispatch_env& env, bool after_done) const {
  if (!after_done && wait(slot, env, After, after_ms_, after_)) return dispatch_status::Pending;
  const slot_frame& f = slot.top_frame();
  const std::int64_t elapsed_ms = (mm::deadline_after(0) - f.saved) / 1'000'000;
  if (f.count > elapsed_ms && wait(slot, env, Total, static_cast<std::uint32_t>(f.count - elapsed_ms), total_)) {
    return dispatch_status::Pending;
  }
  return dispatch_status::Done;  // slot.result: the child's reply
}

dispatch_status latency_injection_route::resume(request_slot& slot, dispatch_env& env) const {
  switch (static_cast<step>(slot.top_frame().state)) {
    case Before:
      slot.top_frame().state = Child;
      dispatch_child(child_, slot, env);
      return dispatch_status::Pending;
    case Child: return after_child(slot, env, false);
    case After: return after_child(slot, env, true);
    case Total: break;
  }
  return dispatch_status::Done;
}

// ---- the kind: options, how the config formats spell them, build.

namespace {

// A wait in milliseconds: YAML a duration ("2s", "500ms", 0), mcrouter an
// integer of milliseconds; at most kLatencyMaxMs either way.
bool latency_read_ms(config::route_kind_reader& in, const YAML::Node& v, const std::string& what, std::uint32_t& out) {
  std::uint64_t ms = 0;
  const std::string text = v.IsScalar() ? v.Scalar() : "";
  const bool yaml = in.format() == config::route_format::Yaml;
  const bool ok = yaml ? config::parse_duration(text, ms) : config::parse_unsigned(text, ms);
  if (!ok || ms > kLatencyMaxMs) {
    in.fail_node(v, yaml ? what + ": expected a duration (500ms, 2s) from 0 to 60s, got " + config::describe_node(v)
                         : "LatencyInjectionRoute: '" + what + "' must be an integer from 0 to 60000 (ms)");
    return false;
  }
  out = static_cast<std::uint32_t>(ms);
  return true;
}

template <std::uint32_t latency_options::*F>
void latency_read_wait(config::route_kind_reader& in, const char* key, config::route_config&,
                       config::route_options& opts) {
  latency_read_ms(in, *in.value(key), key, static_cast<latency_options&>(opts).*F);
}

template <std::uint32_t latency_options::*F>
std::string latency_show_wait(const config::route_options& o) {
  const std::uint32_t ms = static_cast<const latency_options&>(o).*F;
  return ms == 0 ? std::string() : std::to_string(ms) + "ms";
}

// [[percentile, wait], ...]: percentiles in (0, 100], strictly increasing.
void latency_read_percentiles(config::route_kind_reader& in, const char* key, config::route_config&,
                              config::route_options& opts) {
  auto& o = static_cast<latency_options&>(opts);
  const YAML::Node& v = *in.value(key);
  const std::string what = in.format() == config::route_format::Yaml
                               ? std::string(key) + ": "
                               : "LatencyInjectionRoute: '" + std::string(key) + "' ";
  if (!v.IsSequence()) {
    in.fail_node(v, what + "must be a list of [percentile, latency] pairs");
    return;
  }
  for (const YAML::Node& e : v) {
    double pct = 0;
    char* end = nullptr;
    const std::string text = e.IsSequence() && e.size() == 2 && e[0].IsScalar() ? e[0].Scalar() : "";
    if (!text.empty()) pct = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !(pct > 0.0 && pct <= 100.0)) {
      in.fail_node(e, what + "each entry must be [percentile, latency] with a percentile in (0, 100]");
      return;
    }
    if (!o.total_percentiles.empty() && pct <= o.total_percentiles.back().first) {
      in.fail_node(e, what + "percentiles must be strictly increasing");
      return;
    }
    std::uint32_t ms = 0;
    if (!latency_read_ms(in, e[1], key, ms)) return;
    o.total_percentiles.emplace_back(pct, ms);
  }
}

std::string latency_show_percentiles(const config::route_options& opts) {
  std::string out;
  for (const auto& [pct, ms] : static_cast<const latency_options&>(opts).total_percentiles) {
    if (!out.empty()) out += ',';
    out += config::number_text(pct);
    out += ':';
    out += std::to_string(ms);
    out += "ms";
  }
  return out;
}

void latency_read_max_us(config::route_kind_reader& in, const char* key, config::route_config&,
                         config::route_options& opts) {
  const YAML::Node& v = *in.value(key);
  std::uint64_t us = 0;
  if (!v.IsScalar() || !config::parse_unsigned(v.Scalar(), us) || us > UINT32_MAX) {
    in.fail_node(v, "LatencyInjectionRoute: 'max_request_latency_us' is not an int");
    return;
  }
  static_cast<latency_options&>(opts).max_request_latency_us = static_cast<std::uint32_t>(us);
}

constexpr config::child_slot kLatencySlots[] = {
    {"child", "child", "child", false, 1, "LatencyInjectionRoute: 'child' property is missing."},
};
constexpr config::option_spec kLatencyOptions[] = {
    config::custom_option("before", "before_latency_ms", "the wait before the child is asked (mcrouter: in ms)",
                          latency_read_wait<&latency_options::before_ms>,
                          latency_show_wait<&latency_options::before_ms>, "2s", "2000"),
    config::custom_option("after", "after_latency_ms", "the wait after the child answered (mcrouter: in ms)",
                          latency_read_wait<&latency_options::after_ms>, latency_show_wait<&latency_options::after_ms>,
                          "1s", "1000"),
    config::custom_option(
        "total", "total_latency_ms", "the least the whole request takes: padded to it when faster (mcrouter: in ms)",
        latency_read_wait<&latency_options::total_ms>, latency_show_wait<&latency_options::total_ms>, "3s", "3000"),
    config::custom_option("total_percentiles", "total_latency_percentile_ms",
                          "a total drawn per request: [[percentile, latency], ...], percentiles increasing to 100",
                          latency_read_percentiles, latency_show_percentiles, "[[50, 10ms], [100, 20ms]]",
                          "[[50, 10], [100, 20]]"),
    config::flag_option<&latency_options::request_payload>(
        nullptr, "request_payload_latency",
        "mcrouter's per-request latencies from Carbon request fields (memcached's protocols have none: no effect)"),
    config::custom_option(nullptr, "max_request_latency_us",
                          "mcrouter's cap on request_payload_latency (accepted; no effect)", latency_read_max_us,
                          config::show_nothing, nullptr, "1000"),
};
constexpr route_stat kLatencyStats[] = {
    {"before_latency_injected", "latency_injection: requests held before their child was asked."},
    {"after_latency_injected", "latency_injection: requests held after their child answered."},
    {"total_latency_injected", "latency_injection: requests padded to their total latency."},
    {"latency_skipped", "latency_injection: waits skipped (the worker's timed steps were full or stopped)."},
};

// mcrouter: at least one of the options must be there, and a route that
// injects nothing is its child alone.
void finish_latency(config::route_kind_reader& reader, config::route_config& r) {
  const auto& o = config::options_of<latency_options>(r);
  const bool mcrouter = reader.format() == config::route_format::Mcrouter;
  if (mcrouter && !reader.has("before_latency_ms") && !reader.has("after_latency_ms") &&
      !reader.has("total_latency_ms") && !reader.has("request_payload_latency") &&
      !reader.has("total_latency_percentile_ms")) {
    reader.fail(
        "LatencyInjectionRoute must specify either 'before_latency_ms', 'after_latency_ms', 'total_latency_ms', "
        "'total_latency_percentile_ms' or 'request_payload_latency'");
    return;
  }
  if (!mcrouter && !reader.has("before") && !reader.has("after") && !reader.has("total") &&
      !reader.has("total_percentiles")) {
    reader.fail("a latency_injection route needs `before`, `after`, `total` or `total_percentiles`");
    return;
  }
  if (o.before_ms == 0 && o.after_ms == 0 && o.total_ms == 0 && o.total_percentiles.empty() && r.children.size() == 1) {
    config::become_only_child(r);
  }
}

const route* build_latency(tree_builder& b, const config::route_config& r) {
  const route* child = b.child(r, "child", true);
  if (child == nullptr) return nullptr;
  return b.add<latency_injection_route>(b.name_of(r), *child, config::options_of<latency_options>(r));
}

constexpr config::route_kind_info kLatencyInfo{
    "latency_injection",
    "LatencyInjectionRoute",
    "waits before and after its child, or pads a request to a total latency",
    kLatencySlots,
    kLatencyOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> { return std::make_shared<latency_options>(); },
    config::route_kind_info::collapse::None,
    finish_latency,
};

}  // namespace

extern constinit const kind_module kLatencyInjectionKind{kLatencyInfo, build_latency, kLatencyStats};

}  // namespace ithaca::route
