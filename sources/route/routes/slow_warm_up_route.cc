// The `slow_warm_up` route (mcrouter's SlowWarmUpRoute, a PoolRoute's
// `slow_warmup`): a server coming back empty (its hit rate low) gets only a
// share of the gets, the rest going to `failover` (mcrouter's
// failoverTarget), so its misses do not all land on what is behind it at
// once; the share grows with its hit rate as it fills.
//
// Per server of the target pool (mcrouter wraps each destination; for a
// target that is not a pool, one for the whole target): the hits and misses
// of the requests it answered (a found key, DELETED or TOUCHED is a hit,
// NOT_FOUND a miss; counted once min_requests were seen, before that the hit
// rate is 1). It is warming up once its hit rate falls below
// enable_threshold, until it rises above disable_threshold; then a get goes
// to it with probability start + hit_rate * step, else to `failover`. The
// counts are cumulative since the tree was built, as mcrouter's, and shared
// by the workers (relaxed atomics: a race costs one request's count). A
// multi-key get is decided by its first key's server.
#include <atomic>
#include <cstdint>
#include <memory>
#include <random>

#include "command_class.h"
#include "pool_route.h"
#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"

namespace ithaca::route {

namespace {

struct slow_warm_up_settings {
  double enable_threshold = 0.7;
  double disable_threshold = 0.9;
  double start = 0.1;
  double step = 1.0;
  std::uint64_t min_requests = 100;
};

struct slow_warm_up_counts {
  std::atomic<std::uint64_t> hits{0};
  std::atomic<std::uint64_t> misses{0};
  std::atomic<bool> warming{false};
};

class slow_warm_up_route final : public route {
 public:
  slow_warm_up_route(std::string name, const route& target, const route& failover, slow_warm_up_settings s)
      : route(std::move(name)), target_(target), failover_(failover), settings_(s) {
    const auto* p = dynamic_cast<const pool_route*>(&target);
    pool_ = p != nullptr ? &p->pool() : nullptr;
    servers_ = pool_ != nullptr ? pool_->servers().size() : 1;
    counts_ = std::make_unique<slow_warm_up_counts[]>(servers_);
  }
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "slow_warm_up"; }
  std::vector<const route*> children() const override { return {&target_, &failover_}; }
  void kind_counters(const counter_out& out) const override {
    out("warm_up_failovers", failovers_.load(std::memory_order_relaxed));
  }

 private:
  std::size_t server_of(std::string_view key) const { return pool_ != nullptr ? pool_->locate(key) : 0; }
  double hit_rate(const slow_warm_up_counts& c) const;
  // Whether the server is warming up now (the hysteresis of the thresholds).
  bool warming(slow_warm_up_counts& c) const;

  const route& target_;
  const route& failover_;
  slow_warm_up_settings settings_;
  const proxy::pool* pool_ = nullptr;
  std::size_t servers_ = 1;
  std::unique_ptr<slow_warm_up_counts[]> counts_;
  mutable std::atomic<std::uint64_t> failovers_{0};
};

double slow_warm_up_route::hit_rate(const slow_warm_up_counts& c) const {
  const std::uint64_t hits = c.hits.load(std::memory_order_relaxed);
  const std::uint64_t total = hits + c.misses.load(std::memory_order_relaxed);
  if (total < settings_.min_requests) return 1.0;
  return static_cast<double>(hits) / static_cast<double>(total);
}

bool slow_warm_up_route::warming(slow_warm_up_counts& c) const {
  const double rate = hit_rate(c);
  const bool was = c.warming.load(std::memory_order_relaxed);
  const bool now = was ? rate < settings_.disable_threshold : rate < settings_.enable_threshold;
  if (now != was) c.warming.store(now, std::memory_order_relaxed);
  return now;
}

dispatch_status slow_warm_up_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  const protocol::command_class c = protocol::classify(slot.req);
  if (slot.req.keys.empty()) return target_.dispatch(slot, env);
  if (c == protocol::command_class::Retrieve) {
    slow_warm_up_counts& n = counts_[server_of(slot.req.keys[0])];
    if (warming(n)) {
      thread_local std::minstd_rand rng{std::random_device{}()};
      const double share = settings_.start + hit_rate(n) * settings_.step;
      if (std::uniform_real_distribution<double>(0, 1)(rng) > share) {
        failovers_.fetch_add(1, std::memory_order_relaxed);
        return failover_.dispatch(slot, env);
      }
    }
  } else if (c != protocol::command_class::Delete && c != protocol::command_class::Touch) {
    return target_.dispatch(slot, env);  // counts neither a hit nor a miss
  }
  slot.push_frame(slot_frame{this, 0, 0, 0});
  dispatch_child(target_, slot, env);
  return dispatch_status::Pending;
}

// The target answered: count its hits and misses by server.
dispatch_status slow_warm_up_route::resume(request_slot& slot, dispatch_env&) const {
  using protocol::routed_outcome;
  const protocol::routed_result& r = slot.result;
  switch (r.outcome) {
    case routed_outcome::Hits:
      for (std::size_t i = 0; i < slot.req.keys.size() && i < r.key_count(); ++i) {
        if (r.hit(i).failed) continue;
        auto& n = counts_[server_of(slot.req.keys[i])];
        (r.hit(i).found ? n.hits : n.misses).fetch_add(1, std::memory_order_relaxed);
      }
      break;
    case routed_outcome::Deleted:
    case routed_outcome::Touched:
      counts_[server_of(slot.req.keys[0])].hits.fetch_add(1, std::memory_order_relaxed);
      break;
    case routed_outcome::NotFound:
      counts_[server_of(slot.req.keys[0])].misses.fetch_add(1, std::memory_order_relaxed);
      break;
    default: break;
  }
  return dispatch_status::Done;
}

// ---- the kind: options, how the config formats spell them, build.

struct slow_warm_up_options final : config::route_options {
  slow_warm_up_settings settings;
};

// mcrouter's SlowWarmUpRouteSettings: enable_threshold and disable_threshold
// (required, in [0, 1], enable below disable), start in (0, 1), step in
// (0, 100), min_requests above 0.
void read_slow_warm_up_settings(config::route_kind_reader& in, const char* key, config::route_config&,
                                config::route_options& opts) {
  auto& s = static_cast<slow_warm_up_options&>(opts).settings;
  const YAML::Node& v = *in.value(key);
  if (!v.IsMap()) {
    in.fail_at(key, "'settings' in slow_warmup must be a json object.");
    return;
  }
  in.check_keys(v, "slow_warmup settings", {"enable_threshold", "disable_threshold", "start", "step", "min_requests"});
  for (const char* name : {"enable_threshold", "disable_threshold"}) {
    if (!v[name]) in.fail_node(v, std::string("SlowWarmUpSettings: Couldn't find '") + name + "' in config");
  }
  in.number_in(v, "enable_threshold", s.enable_threshold, 0, 1, "a number from 0 to 1", false);
  in.number_in(v, "disable_threshold", s.disable_threshold, 0, 1, "a number from 0 to 1", false);
  if (s.enable_threshold >= s.disable_threshold) {
    in.fail_node(v, "SlowWarmUpSettings: 'enable_threshold' must be strictly less than 'disable_threshold'.");
  }
  in.number_in(v, "start", s.start, 0, 1, "a number above 0 and below 1", true);
  if (s.start >= 1) in.fail_node(v["start"], "SlowWarmUpSettings: 'start' must be a double in (0,1) range");
  in.number_in(v, "step", s.step, 0, 100, "a number above 0 and below 100", true);
  if (s.step >= 100) in.fail_node(v["step"], "SlowWarmUpSettings: 'step' must be in the (0,100) range");
  double min = static_cast<double>(s.min_requests);
  if (in.number_in(v, "min_requests", min, 1, 1e12, "an integer greater than 0", false)) {
    if (min != static_cast<double>(static_cast<std::uint64_t>(min))) {
      in.fail_node(v["min_requests"], "SlowWarmUpSettings: 'min_requests' must be an integer, but was a double");
    }
    s.min_requests = static_cast<std::uint64_t>(min);
  }
}

std::string show_slow_warm_up_settings(const config::route_options& opts) {
  const auto& s = static_cast<const slow_warm_up_options&>(opts).settings;
  return config::number_text(s.enable_threshold) + ".." + config::number_text(s.disable_threshold) +
         " start=" + config::number_text(s.start) + " step=" + config::number_text(s.step) +
         " min_requests=" + std::to_string(s.min_requests);
}

constexpr config::child_slot kSlowWarmUpSlots[] = {
    {"target", "target", nullptr, false, 1},
    {"failover", "failover", nullptr, false, 1},
};
constexpr config::option_spec kSlowWarmUpOptions[] = {
    config::custom_option("settings", "settings",
                          "{enable_threshold, disable_threshold, start, step, min_requests}: mcrouter's defaults "
                          "0.7, 0.9, 0.1, 1, 100",
                          read_slow_warm_up_settings, show_slow_warm_up_settings,
                          "{enable_threshold: 0.5, disable_threshold: 0.8}", nullptr),
};

const route* build_slow_warm_up(tree_builder& b, const config::route_config& r) {
  const route* target = b.child(r, "target", true);
  const route* failover = b.child(r, "failover", true);
  if (target == nullptr || failover == nullptr) return nullptr;
  return b.add<slow_warm_up_route>(b.name_of(r), *target, *failover,
                                   config::options_of<slow_warm_up_options>(r).settings);
}

constexpr route_stat kSlowWarmUpStats[] = {
    {"warm_up_failovers", "Gets a slow_warm_up route sent to its failover while a server warmed up."},
};

constexpr config::route_kind_info kSlowWarmUpInfo{
    "slow_warm_up",
    nullptr,
    "a server whose hit rate is low gets a share of the gets growing with it, the rest go to failover",
    kSlowWarmUpSlots,
    kSlowWarmUpOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> {
      return std::make_shared<slow_warm_up_options>();
    },
};

}  // namespace

extern constinit const kind_module kSlowWarmUpKind{kSlowWarmUpInfo, build_slow_warm_up, kSlowWarmUpStats};

}  // namespace ithaca::route
