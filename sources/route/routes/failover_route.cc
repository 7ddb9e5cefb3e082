#include "failover_route.h"

#include "handle_walk.h"

#include <algorithm>
#include <ctime>
#include <iterator>

#include "command_class.h"
#include "mcrouter_json.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "yaml_section.h"

namespace ithaca::route {

namespace {

// A text get of several keys: asked per child slot, failed keys alone onward.
bool multi_get(const protocol::request& req) { return protocol::is_multikey_retrieval(req) && req.keys.size() > 1; }

}  // namespace

failover_route::failover_route(std::string name, std::vector<const route*> children, options opts)
    : route(std::move(name)),
      children_(std::move(children)),
      errors_(opts.errors),
      feed_(static_cast<std::int64_t>(opts.limit_rate * 1000)),
      cap_(static_cast<std::int64_t>(opts.limit_burst * 1000)),
      tokens_(cap_),
      gutter_(opts.gutter),
      exptime_(opts.exptime) {}

dispatch_status failover_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  if (feed_ > 0) {
    std::int64_t t = tokens_.load(std::memory_order_relaxed);
    while (t < cap_ && !tokens_.compare_exchange_weak(t, std::min(cap_, t + feed_), std::memory_order_relaxed)) {}
  }
  slot.push_frame(slot_frame{this, 0, 0, 0});
  if (multi_get(slot.req) && children_.size() > 1) {
    // frame.state: the child asked last. Hits gather in slot.result.
    slot.result.prepare(slot.req);
    request_slot& c = slot.child_for_keys(0);
    slot.add_call();
    dispatch_child(*children_[0], c, env);
    return dispatch_status::Pending;
  }
  dispatch_child(*children_[0], slot, env);
  return dispatch_status::Pending;
}

// A reply that does not fail over ends the route where it arrives. (A
// multi-key get always comes back: its child's hits are merged in resume.)
bool failover_route::wants_resume(const request_slot& slot, const slot_frame& f) const {
  if (multi_get(slot.req) && children_.size() > 1) return true;
  const auto cls = static_cast<std::size_t>(protocol::operation_of(slot.req));
  if (f.state + 1 >= children_.size() || !fails_over(slot.result, errors_[cls])) return false;
  // The gutter takes no deletes: its values expire instead.
  return !(gutter_ && protocol::classify(slot.req) == protocol::command_class::Delete);
}

bool failover_route::take_token() const {
  if (feed_ <= 0) return true;
  std::int64_t t = tokens_.load(std::memory_order_relaxed);
  do {
    if (t < 1000) {
      route_counters::add(counters().failover_limited);
      return false;
    }
  } while (!tokens_.compare_exchange_weak(t, t - 1000, std::memory_order_relaxed));
  return true;
}

dispatch_status failover_route::resume(request_slot& slot, dispatch_env& env) const {
  if (multi_get(slot.req) && children_.size() > 1) return resume_multi(slot, env);
  slot_frame& f = slot.top_frame();
  const std::size_t next = f.state + 1;
  if (!wants_resume(slot, f)) return dispatch_status::Done;
  if (!take_token()) return dispatch_status::Done;
  route_counters::add(counters().failovers);
  if (gutter_ && carries_exptime(slot.req)) {
    cap_exptime(slot.req, exptime_, static_cast<std::int64_t>(std::time(nullptr)));
    if (protocol::classify(slot.req) == protocol::command_class::Store) route_counters::add(counters().gutter_writes);
  }
  f.state = static_cast<std::uint32_t>(next);
  slot.release_reply();  // the next child prepares the result again
  dispatch_child(*children_[next], slot, env);
  return dispatch_status::Pending;
}

// The child asked last has answered: its hits join the others; the keys
// whose server failed (if its errors fail over) go to the next child alone.
dispatch_status failover_route::resume_multi(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  request_slot& last = slot.child_at(f.state);
  const auto cls = static_cast<std::size_t>(protocol::operation_of(slot.req));
  const bool onward = f.state + 1 < children_.size() && fails_over(last.result, errors_[cls]);
  merge_hits(slot.result, last.result, last.key_map);
  if (!onward) return dispatch_status::Done;
  std::vector<std::uint32_t> failed;
  for (std::size_t i = 0; i < slot.result.key_count(); ++i) {
    if (slot.result.hit(i).failed && !slot.result.hit(i).found) failed.push_back(static_cast<std::uint32_t>(i));
  }
  if (failed.empty() || !take_token()) return dispatch_status::Done;
  route_counters::add(counters().failovers);
  // Asked again: no longer failed unless the next child fails them too.
  for (const std::uint32_t i : failed) slot.result.set_failed(i, false);
  slot.result.failed_keys -=
      std::min<std::uint32_t>(slot.result.failed_keys, static_cast<std::uint32_t>(failed.size()));
  f.state += 1;
  request_slot& c = slot.child_for_keys(f.state, failed);
  // gat / gats into the gutter: their new TTL capped as any gutter write.
  if (gutter_ && carries_exptime(c.req)) cap_exptime(c.req, exptime_, static_cast<std::int64_t>(std::time(nullptr)));
  slot.add_call();
  dispatch_child(*children_[f.state], c, env);
  return dispatch_status::Pending;
}

std::string failover_route::handle_name() const {
  const std::string& n = name();
  return n == kind() ? std::string("failover") : "failover:" + n;
}

void failover_route::walk_handles(const protocol::request& req, handle_walk& w) const {
  if (!gutter_) {
    route::walk_handles(req, w);
    return;
  }
  w.line(handle_name());
  const std::vector<const route*> targets = targets_for(req);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (i == 0 || exptime_ == 0) {
      w.child(*targets[i], req);
      continue;
    }
    w.enter();
    w.line("modify-exptime|min|exptime=" + std::to_string(exptime_));
    w.child(*targets[i], req);
    w.leave();
  }
}

}  // namespace ithaca::route

// ---- the kinds (failover, failover_exptime): their options, shared, and
// how the config formats spell them; build.

namespace ithaca::route {

namespace {

struct failover_options final : config::route_options {
  // Which results fail over, by mcrouter's result names
  // (config::known_failover_errors): `errors` for every class; a non-empty
  // by_class[c] replaces it for class c. All empty: every error.
  std::vector<std::string> errors;
  std::array<std::vector<std::string>, config::kOpClasses> by_class;
  double limit_rate = 0;  // failover_limit: tokens per request, (0, 1]; 0: no limit
  double limit_burst = 1000;
  std::uint32_t exptime = 10;                        // failover_exptime: the TTL cap of writes to a failover child
  bool failover_tag = false, lease_pairing = false;  // mcrouter's: refused when on
};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ',';
    out += n;
  }
  return out;
}

// The names of `list` into `out`: YAML's words (did you mean) or mcrouter's
// (its mc_res_ prefix accepted).
void read_error_names(config::route_kind_reader& in, const YAML::Node& list, const std::string& where,
                      std::vector<std::string>& out) {
  const bool yaml = in.format() == config::route_format::Yaml;
  if (!list.IsSequence()) {
    in.fail_node(list, yaml ? where + ": expected a list of error names (connect_error, timeout, tko, ...), got " +
                                  config::describe_node(list)
                            : std::string("List of failover errors is not an array."));
    return;
  }
  const std::vector<std::string>& known = config::known_failover_errors();
  for (const YAML::Node& e : list) {
    std::string name = e.IsScalar() ? e.Scalar() : "";
    if (!yaml && name.starts_with("mc_res_")) name = name.substr(7);
    if (std::find(known.begin(), known.end(), name) != known.end()) {
      out.push_back(name);
    } else if (!yaml) {
      in.fail_node(e, in.what() + ": Failover error '" + e.Scalar() + "' is not a valid error type.");
    } else {
      const std::string close = config::closest_key(name, known);
      in.fail_node(e, where + ": unknown error '" + name + "'" +
                          (close.empty() ? " (mcrouter's result names: connect_error, connect_timeout, timeout, tko, "
                                           "remote_error, busy, try_again, ...)"
                                         : " (did you mean '" + close + "'?)"));
    }
  }
  if (yaml && out.empty() && list.size() == 0) in.fail_node(list, where + ": an empty list would never fail over");
}

// `failover_errors`: a list for every class, or a table by class (YAML: get,
// set, delete, arithmetic, touch; mcrouter: gets, updates, deletes).
void read_failover_errors(config::route_kind_reader& in, const char* key, config::route_config&,
                          config::route_options& opts) {
  auto& o = static_cast<failover_options&>(opts);
  const YAML::Node& v = *in.value(key);
  const bool yaml = in.format() == config::route_format::Yaml;
  if (v.IsMap()) {
    if (yaml) {
      in.check_keys(v, key, {"get", "set", "delete", "arithmetic", "touch"});
      for (std::size_t c = 0; c < config::kOpClasses; ++c) {
        const char* cls = kinds::to_string(kinds::op_class_at(c));
        if (v[cls]) read_error_names(in, v[cls], cls, o.by_class[c]);
      }
    } else {
      in.check_keys(v, in.what() + " failover_errors", {"gets", "updates", "deletes"});
      const char* const mcrouter_classes[] = {"gets", "updates", "deletes"};
      for (std::size_t c = 0; c < 3; ++c) {
        if (v[mcrouter_classes[c]]) read_error_names(in, v[mcrouter_classes[c]], key, o.by_class[c]);
      }
    }
  } else if (yaml || v.IsSequence()) {
    read_error_names(in, v, key, o.errors);
  } else {
    in.fail_node(v, "Failover errors must be either an array or an object.");
  }
}

std::string show_failover_errors(const config::route_options& opts) {
  const auto& o = static_cast<const failover_options&>(opts);
  std::string out = joined(o.errors);
  for (std::size_t c = 0; c < config::kOpClasses; ++c) {
    if (o.by_class[c].empty()) continue;
    if (!out.empty()) out += ';';
    out += kinds::to_string(kinds::op_class_at(c));
    out += ':';
    out += joined(o.by_class[c]);
  }
  return out;
}

// `failover_limit: {rate, burst}`. YAML refuses a value out of range;
// mcrouter clamps both (a rate into [0, 1], a burst to at least 1), as
// mcrouter does, but a rate of 0 is refused.
void read_failover_limit(config::route_kind_reader& in, const char* key, config::route_config&,
                         config::route_options& opts) {
  auto& o = static_cast<failover_options&>(opts);
  const YAML::Node& v = *in.value(key);
  if (in.format() == config::route_format::Yaml) {
    if (!v.IsMap()) {
      in.fail_at(key, "failover_limit: expected {rate: R, burst: B}, got " + config::describe_node(v));
      return;
    }
    in.check_keys(v, key, {"rate", "burst"});
    if (!in.number_in(v, "rate", o.limit_rate, 0, 1, "a fraction of requests above 0, at most 1", true) && !v["rate"]) {
      in.fail_node(v, "failover_limit needs `rate:` (the share of requests that may fail over, 0 to 1)");
    }
    in.number_in(v, "burst", o.limit_burst, 1, 1e12, "a number of failovers, at least 1", false);
    return;
  }
  double rate = 0, burst = 1000;
  if (!v.IsMap() || !v["rate"] || !config::mcrouter::as_number(v["rate"], rate)) {
    in.fail_node(v, "FailoverRateLimiter: failover_limit needs a numeric `rate`");
    return;
  }
  in.check_keys(v, "failover_limit", {"rate", "burst"});
  if (v["burst"] && !config::mcrouter::as_number(v["burst"], burst)) {
    in.fail_node(v["burst"], "FailoverRateLimiter: burst is not a number");
  }
  rate = std::min(std::max(rate, 0.0), 1.0);
  if (rate == 0) {
    in.fail_node(v["rate"],
                 "failover_limit: a rate of 0 (no failover after the first burst) is not supported by "
                 "ithaca; leave failover_limit out or give a rate above 0");
  }
  o.limit_rate = rate;
  o.limit_burst = std::max(burst, 1.0);
}

std::string show_failover_limit(const config::route_options& opts) {
  const auto& o = static_cast<const failover_options&>(opts);
  return config::number_text(o.limit_rate) + "/" + config::number_text(o.limit_burst);
}

// mcrouter's failover_policy: ithaca tries the children in order, only.
void refuse_failover_policy(config::route_kind_reader& in, const char* key, config::route_config&,
                            config::route_options&) {
  in.fail_at(key, in.what() + ": failover_policy is not supported by ithaca (children are tried in order)");
}

void finish_failover_common(config::route_kind_reader& in, config::route_config& r) {
  const auto& o = config::options_of<failover_options>(r);
  if (o.failover_tag) in.fail_at("failover_tag", in.what() + ": failover_tag is not supported by ithaca");
  if (o.lease_pairing) {
    in.fail_at("enable_lease_pairing", in.what() + ": enable_lease_pairing is not supported by ithaca");
  }
}

// The options both kinds take; the gutter's add its exptime.
constexpr config::option_spec kFailoverOptions[] = {
    config::custom_option("failover_errors", "failover_errors",
                          "which results fail over (mcrouter's result names: timeout, connect_error, tko, ...), "
                          "for every class or by class",
                          read_failover_errors, show_failover_errors, "[timeout, connect_error]",
                          "[\"timeout\", \"connect_error\"]"),
    config::custom_option("failover_limit", "failover_limit",
                          "the share of requests that may fail over (rate, 0 to 1) and its burst", read_failover_limit,
                          show_failover_limit, "{rate: 0.5, burst: 100}", "{\"rate\": 0.5, \"burst\": 100}"),
    // mcrouter's alone, refused: no sample a file could give.
    config::custom_option(nullptr, "failover_policy", "mcrouter's choice of failover order, refused",
                          refuse_failover_policy, config::show_nothing, nullptr, nullptr),
    config::flag_option<&failover_options::failover_tag>(nullptr, "failover_tag",
                                                         "mcrouter's failover tagging, refused when true"),
    config::flag_option<&failover_options::lease_pairing>(nullptr, "enable_lease_pairing",
                                                          "mcrouter's lease pairing, refused when true"),
};
constexpr auto kGutterOptions = [] {
  std::array<config::option_spec, std::size(kFailoverOptions) + 1> out{};
  std::copy(std::begin(kFailoverOptions), std::end(kFailoverOptions), out.begin());
  out.back() = config::seconds_option<&failover_options::exptime>(
      "exptime", "failover_exptime", "the TTL cap of writes sent to a failover child (10s in YAML, 60 in mcrouter)");
  return out;
}();

constexpr config::child_slot kFailoverSlots[] = {
    {"", "children", "children", true, 2},
};
constexpr config::child_slot kGutterSlots[] = {
    {"normal", "normal", "normal", false, 1, "FailoverWithExptimeRoute: normal not found"},
    {"failover", "failover", "failover", true, 1, nullptr, true},
};

// mcrouter: a gutter with no failover child is its normal route alone.
void finish_gutter(config::route_kind_reader& in, config::route_config& r) {
  finish_failover_common(in, r);
  if (in.format() == config::route_format::Mcrouter && r.children.size() == 1) {
    config::become_only_child(r);
  }
}

failover_route::options runtime_options(tree_builder& b, const config::route_config& r, bool& ok) {
  const auto& o = config::options_of<failover_options>(r);
  failover_route::options out;
  std::string bad;
  failover_mask all = kFailoverAll;
  ok = parse_failover_errors(o.errors, all, &bad);
  out.errors.fill(all);
  for (std::size_t c = 0; ok && c < config::kOpClasses; ++c) {
    if (!o.by_class[c].empty()) ok = parse_failover_errors(o.by_class[c], out.errors[c], &bad);
  }
  if (!ok) b.fail(r, "unknown failover error '" + bad + "'");
  out.limit_rate = o.limit_rate;
  out.limit_burst = o.limit_burst > 0 ? o.limit_burst : 1000;
  out.exptime = o.exptime == 0 ? 10 : o.exptime;
  return out;
}

const route* build_failover(tree_builder& b, const config::route_config& r) {
  bool ok = false;
  failover_route::options o = runtime_options(b, r, ok);
  std::vector<const route*> children;
  if (!ok || !b.children(r, "", true, 1, children)) return nullptr;
  return b.add<failover_route>(b.name_of(r), std::move(children), o);
}

const route* build_gutter(tree_builder& b, const config::route_config& r) {
  bool ok = false;
  failover_route::options o = runtime_options(b, r, ok);
  if (!ok) return nullptr;
  o.gutter = true;
  const route* normal = b.child(r, "normal", true);
  if (normal == nullptr) return nullptr;
  std::vector<const route*> children{normal};
  if (r.with_role("failover").empty()) return b.fail(r, "needs at least one `failover` route");
  if (!b.children(r, "failover", true, 0, children)) return nullptr;
  return b.add<failover_route>(b.name_of(r), std::move(children), o);
}

constexpr config::route_kind_info kFailoverInfo{
    "failover",
    "FailoverRoute",
    "the children in order until a reply that is not an error",
    kFailoverSlots,
    kFailoverOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> { return std::make_shared<failover_options>(); },
    config::route_kind_info::collapse::NullOrSingleton,
    finish_failover_common,
};

constexpr config::route_kind_info kGutterInfo{
    "failover_exptime",
    "FailoverWithExptimeRoute",
    "the gutter: the normal child, then failover children whose writes get a TTL cap",
    kGutterSlots,
    kGutterOptions,
    [](config::route_format f) -> std::shared_ptr<config::route_options> {
      auto o = std::make_shared<failover_options>();
      o->exptime = f == config::route_format::Yaml ? 10 : 60;  // the paper's gutter; mcrouter's default
      return o;
    },
    config::route_kind_info::collapse::None,
    finish_gutter,
};

}  // namespace

extern constinit const kind_module kFailoverKind{kFailoverInfo, build_failover};
extern constinit const kind_module kFailoverExptimeKind{kGutterInfo, build_gutter};

}  // namespace ithaca::route
