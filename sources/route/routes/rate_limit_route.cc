#include "rate_limit_route.h"

#include "command_class.h"
#include "mcrouter_json.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"
#include "yaml_section.h"

namespace ithaca::route {

namespace {
constexpr std::string_view kLimited = "SERVER_ERROR rate limited";
}  // namespace

rate_limit_route::rate_limit_route(std::string name, const route& child, const route* fallback,
                                   const std::array<double, kClasses>& rate, const std::array<double, kClasses>& burst)
    : route(std::move(name)), child_(child), fallback_(fallback) {
  for (std::size_t c = 0; c < kClasses; ++c) buckets_[c] = std::make_unique<token_bucket>(rate[c], burst[c]);
}

bool rate_limit_route::answers_in_result() const {
  return child_.answers_in_result() && (fallback_ == nullptr || fallback_->answers_in_result());
}

std::vector<const route*> rate_limit_route::children() const {
  if (fallback_ == nullptr) return {&child_};
  return {&child_, fallback_};
}

dispatch_status rate_limit_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  const protocol::op_class c = protocol::operation_of(slot.req);
  if (c == protocol::op_class::None || buckets_[static_cast<std::size_t>(c)]->take()) {
    return child_.dispatch(slot, env);
  }
  route_counters::add(counters().rate_limited);
  if (fallback_ != nullptr) return fallback_->dispatch(slot, env);
  refuse(slot.req, slot.result, kLimited, protocol::binary_status::TemporaryFailure);
  return dispatch_status::Pending;  // no calls: ready at once, in order
}

}  // namespace ithaca::route

// ---- the kind: options, how the config formats spell them, build.

namespace ithaca::route {

namespace {

struct rate_limit_options final : config::route_options {
  // By class (get, set, delete, arithmetic, touch): requests per second
  // (0: unlimited) and the bucket's size (default: one second's worth).
  std::array<double, config::kOpClasses> rate{}, burst{};
};

// YAML: rates: {CLASS: N, ...} (at least one).
void read_yaml_rates(config::route_kind_reader& in, const char* key, rate_limit_options& o) {
  const YAML::Node& v = *in.value(key);
  if (!v.IsMap() || v.size() == 0) {
    in.fail_node(v,
                 "a rate_limit route needs `rates:` (requests per second by class: get, set, delete, arithmetic, "
                 "touch), got " +
                     config::describe_node(v));
    return;
  }
  in.check_keys(v, key, {"get", "set", "delete", "arithmetic", "touch"});
  for (std::size_t c = 0; c < config::kOpClasses; ++c) {
    if (in.number_in(v, kinds::to_string(kinds::op_class_at(c)), o.rate[c], 0, 1e12, "requests per second above 0",
                     true)) {
      o.burst[c] = o.rate[c];  // mcrouter's default burst: one second's worth
    }
  }
}

// mcrouter's RateLimiter: {gets,sets,deletes}_{rate,burst}; a burst defaults
// to its rate.
void read_mcrouter_rates(config::route_kind_reader& in, const YAML::Node& v, rate_limit_options& o) {
  if (!v.IsMap()) {
    in.fail_node(v, "RateLimiter settings json is not an object");
    return;
  }
  in.check_keys(v, "rates", {"gets_rate", "gets_burst", "sets_rate", "sets_burst", "deletes_rate", "deletes_burst"});
  const std::pair<const char*, config::op_class> classes[] = {
      {"gets", config::op_class::Get}, {"sets", config::op_class::Set}, {"deletes", config::op_class::Delete}};
  for (const auto& [name, cls] : classes) {
    const std::string rate_key = std::string(name) + "_rate";
    const std::string burst_key = std::string(name) + "_burst";
    const std::size_t i = static_cast<std::size_t>(cls);
    if (!v[rate_key]) {
      if (v[burst_key]) in.fail_node(v[burst_key], burst_key + " without " + rate_key);
      continue;
    }
    if (!config::mcrouter::as_number(v[rate_key], o.rate[i]) || o.rate[i] <= 0) {
      in.fail_node(v[rate_key], rate_key + " is not a positive number");
      continue;
    }
    o.burst[i] = o.rate[i];
    if (v[burst_key] && (!config::mcrouter::as_number(v[burst_key], o.burst[i]) || o.burst[i] <= 0)) {
      in.fail_node(v[burst_key], burst_key + " is not a positive number");
    }
  }
}

void read_rates(config::route_kind_reader& in, const char* key, config::route_config&, config::route_options& opts) {
  auto& o = static_cast<rate_limit_options&>(opts);
  if (in.format() == config::route_format::Yaml) {
    read_yaml_rates(in, key, o);
  } else {
    read_mcrouter_rates(in, *in.value(key), o);
  }
}

// YAML: burst: {CLASS: N, ...}, each for a class with a rate.
void read_burst(config::route_kind_reader& in, const char* key, config::route_config&, config::route_options& opts) {
  auto& o = static_cast<rate_limit_options&>(opts);
  const YAML::Node& v = *in.value(key);
  if (!v.IsMap()) {
    in.fail_at(key, "burst: expected a mapping of classes to burst sizes, got " + config::describe_node(v));
    return;
  }
  in.check_keys(v, key, {"get", "set", "delete", "arithmetic", "touch"});
  for (std::size_t c = 0; c < config::kOpClasses; ++c) {
    const char* cls = kinds::to_string(kinds::op_class_at(c));
    if (in.number_in(v, cls, o.burst[c], 1, 1e12, "a number of requests, at least 1", false) && o.rate[c] == 0) {
      in.fail_node(v[cls], std::string("burst: ") + cls + " has a burst but no rate under `rates:`");
    }
  }
}

std::string show_by_class(const std::array<double, config::kOpClasses>& v) {
  std::string out;
  for (std::size_t c = 0; c < config::kOpClasses; ++c) {
    if (v[c] == 0) continue;
    if (!out.empty()) out += ',';
    out += kinds::to_string(kinds::op_class_at(c));
    out += ':';
    out += config::number_text(v[c]);
  }
  return out;
}
std::string show_rates(const config::route_options& o) {
  return show_by_class(static_cast<const rate_limit_options&>(o).rate);
}
std::string show_burst(const config::route_options& o) {
  return show_by_class(static_cast<const rate_limit_options&>(o).burst);
}

constexpr config::child_slot kRateLimitSlots[] = {
    {"target", "target", "target", false, 1, "RateLimitRoute: target not found"},
    {"fallback", "fallback", "fallback", false, 0},
};
constexpr config::option_spec kRateLimitOptions[] = {
    config::custom_option("rates", "rates",
                          "requests per second by class: get, set, delete, arithmetic, touch (mcrouter: "
                          "gets_rate, sets_rate, deletes_rate and their _burst)",
                          read_rates, show_rates, "{get: 1000, set: 50}", "{\"gets_rate\": 1000, \"sets_rate\": 50}",
                          true),
    config::custom_option("burst", nullptr, "the bucket's size by class (default: one second's worth)", read_burst,
                          show_burst, "{get: 5000}", nullptr),
};

const route* build_rate_limit(tree_builder& b, const config::route_config& r) {
  const route* child = b.child(r, "target", false);
  if (child == nullptr) return nullptr;
  const route* fallback = nullptr;
  if (!r.with_role("fallback").empty() && (fallback = b.child(r, "fallback", false)) == nullptr) return nullptr;
  const auto& o = config::options_of<rate_limit_options>(r);
  std::array<double, rate_limit_route::kClasses> rate{}, burst{};
  for (std::size_t c = 0; c < rate.size(); ++c) {
    rate[c] = o.rate[c];
    burst[c] = o.burst[c] > 0 ? o.burst[c] : o.rate[c];
  }
  return b.add<rate_limit_route>(b.name_of(r), *child, fallback, rate, burst);
}

constexpr config::route_kind_info kRateLimitInfo{
    "rate_limit",
    "RateLimitRoute",
    "token buckets per operation class; over the limit to a fallback",
    kRateLimitSlots,
    kRateLimitOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> {
      return std::make_shared<rate_limit_options>();
    },
};

}  // namespace

extern constinit const kind_module kRateLimitKind{kRateLimitInfo, build_rate_limit};

}  // namespace ithaca::route
