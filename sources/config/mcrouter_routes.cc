#include "mcrouter_routes.h"

#include <algorithm>
#include <map>
#include <set>
#include <span>

#include "route_kind_reader.h"

namespace ithaca::config::mcrouter {

namespace {

// mcrouter's route types ithaca has no equivalent for (refused by name).
const std::set<std::string> kUnsupportedTypes = {
    "AsynclogRoute", "BigValueRoute", "BlackholeRoute", "CarbonLookasideRoute", "DevNullRoute",
    "DistributionRoute", "HashStopAllowListRoute", "HostIdRoute", "KeyParseRoute", "KeySplitRoute",
    "L1L2CacheRoute", "L1L2SizeSplitRoute", "LatencyInjectionRoute", "LatestRoute", "LoadBalancerRoute",
    "LoggingRoute", "MigrateRoute", "ModifyKeyRoute", "OriginalClientHashRoute", "PrefixPolicyRoute",
    "RoutingGroupRoute", "SaltedFailoverRoute", "SetDistributionTargetRoute", "SRRoute", "StagingRoute",
    "AxonLogRoute", "DestinationRoute", "OutstandingLimitRoute", "SlowWarmUpRoute", "ShardSplitRoute",
};

// The types read here; the registered kinds' (route_kind_info.h) besides.
const std::vector<std::string> kSupportedTypes = {
    "PoolRoute", "Pool", "FailoverRoute", "FailoverWithExptimeRoute", "HashRoute", "OperationSelectorRoute",
    "PrefixSelectorRoute", "ShadowRoute", "RateLimitRoute",
};

// mcrouter's operation names (carbon's request names) -> ithaca's classes.
bool op_class_of(const std::string& op, op_class& out) {
  static const std::map<std::string, op_class> ops = {
      {"get", op_class::Get},         {"gets", op_class::Get},        {"lease-get", op_class::Get},
      {"metaget", op_class::Get},     {"set", op_class::Set},         {"add", op_class::Set},
      {"replace", op_class::Set},     {"append", op_class::Set},      {"prepend", op_class::Set},
      {"cas", op_class::Set},         {"lease-set", op_class::Set},   {"delete", op_class::Delete},
      {"incr", op_class::Arithmetic}, {"decr", op_class::Arithmetic}, {"touch", op_class::Touch},
      {"gat", op_class::Touch},       {"gats", op_class::Touch},
  };
  auto it = ops.find(op);
  if (it == ops.end()) return false;
  out = it->second;
  return true;
}

}  // namespace

route_config null_route(int line) { return module_node("null", route_format::Mcrouter, line); }


std::vector<route_config> provider::create(const std::string& type, const YAML::Node& json, const YAML::Node& at) {
  const int ln = err_.line(at);
  if (type == "Pool") return pool_servers(json, at);
  if (type == "PoolRoute") return {pool_route(json, at)};
  if (const route_kind_info* k = find_mcrouter_kind(type)) return {module_route(*k, json, at)};
  if (type == "HashRoute") return {hash_route(json, at)};
  if (type == "FailoverRoute") return {failover(json, ln)};
  if (type == "FailoverWithExptimeRoute") return {failover_exptime(json, at)};
  if (type == "OperationSelectorRoute") return {operation_selector(json, at)};
  if (type == "ShadowRoute") return {shadow(json, at)};
  if (type == "RateLimitRoute") return {rate_limit(json, at)};
  if (type == "PrefixSelectorRoute") {
    err_.fail(at, "PrefixSelectorRoute is only read at the top of `route` or `routes` (as mcrouter reads it)");
    return {};
  }
  if (type == "L1L2CacheRoute") {
    err_.fail(at, "mcrouter's L1L2CacheRoute (an L1 route in front of an L2 route) is not supported by ithaca; "
             "ithaca's l1l2 route keeps L1 in its own store (see README \"Routes\")");
    return {};
  }
  if (kUnsupportedTypes.count(type) != 0) {
    err_.fail(at, "mcrouter's " + type + " is not supported by ithaca");
    return {};
  }
  std::vector<std::string> supported = kSupportedTypes;
  for (const route_kind_info* k : route_kinds()) {
    if (k->mcrouter != nullptr) supported.emplace_back(k->mcrouter);
  }
  const std::string close = closest_key(type, supported);
  err_.fail(at, "unknown route type '" + type + "'" + (close.empty() ? std::string() : " (did you mean '" + close + "'?)"));
  return {};
}

namespace {

// A registered kind's node (route_kind_reader.h) with mcrouter's spellings,
// values (integers of seconds, unquoted booleans) and messages.
class json_kind_reader final : public route_kind_reader {
 public:
  json_kind_reader(route_factory& f, json_errors& err, const YAML::Node& json, const YAML::Node& at)
      : f_(f), err_(err), json_(json), at_(at) {}
  route_format format() const override { return route_format::Mcrouter; }
  bool has(const char* key) override { return json_.IsMap() && json_[key]; }
  bool seconds(const char* key, std::uint32_t& out) override {
    if (!has(key)) return false;
    int64_t v = 0;
    if (!as_int(json_[key], v) || v < 0 || v > 30 * 24 * 3600) {
      err_.fail(json_[key], what() + ": " + key + " is not an integer from 0 to 2592000");
      return false;
    }
    out = static_cast<std::uint32_t>(v);
    return true;
  }
  bool flag(const char* key, bool& out) override {
    if (!has(key)) return false;
    if (!as_bool(json_[key], out)) {
      err_.fail(json_[key], what() + ": " + key + " is not a boolean");
      return false;
    }
    return true;
  }
  bool choice(const char* key, std::span<const char* const> names, int& out) override {
    if (!has(key)) return false;
    const YAML::Node v = json_[key];
    std::string list;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (v.IsScalar() && v.Scalar() == names[i]) {
        out = static_cast<int>(i);
        return true;
      }
      list += std::string(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + "'" + names[i] + "'";
    }
    err_.fail(v, what() + ": " + key + " '" + (v.IsScalar() ? v.Scalar() : "") + "' is not supported by ithaca (" +
                     list + ")");
    return false;
  }
  bool text(const char* key, std::string& out) override {
    if (!has(key)) return false;
    out = json_[key].Scalar();
    return true;
  }
  // A list slot spelled `children` takes the short form's rest as well
  // ("AllSyncRoute|Pool|A", or a list): mcrouter's children of a list route.
  void children(const char* key, const child_slot& slot, route_config& r) override {
    std::vector<route_config> made;
    if (!json_.IsMap()) {
      if (slot.list) made = f_.list(json_);
    } else if (const YAML::Node c = json_[key]) {
      if (slot.list) {
        made = f_.list(c);
      } else {
        made.push_back(f_.one(c, key));
      }
    } else if (!slot.list && slot.min > 0) {
      err_.fail(json_, slot.mcrouter_missing != nullptr ? std::string(slot.mcrouter_missing)
                                                        : what() + ": no " + key + " route");
    }
    for (route_config& c : made) {
      c.role = slot.role;
      r.children.push_back(std::move(c));
    }
  }
  void fail(std::string message) override { err_.fail(json_.IsMap() ? json_ : at_, message); }
  void fail_at(const char* key, std::string message) override {
    err_.fail(has(key) ? json_[key] : at_, message);
  }

 private:
  route_factory& f_;
  json_errors& err_;
  const YAML::Node& json_;
  const YAML::Node& at_;
};

}  // namespace

// A registered kind (route_kind_info.h): its keys are the description's
// mcrouter spellings; an object, or for a list kind a short form's rest.
route_config provider::module_route(const route_kind_info& k, const YAML::Node& json, const YAML::Node& at) {
  route_config r;
  r.line = err_.line(at);
  // Not an object: a list kind's short form ("AllSyncRoute|Pool|A"), the
  // text of a kind that takes one ("ErrorRoute|text"), or nothing for a kind
  // that needs nothing ("NullRoute").
  const bool list_kind = !k.children.empty() && k.children.front().list;
  const bool takes_nothing = k.children.empty() && k.options.empty();
  const bool scalar_ok = k.mcrouter_scalar != nullptr && (json.IsScalar() || json.IsNull());
  if (!json.IsMap() && !(list_kind && !json.IsNull()) && !scalar_ok && !(takes_nothing && json.IsNull())) {
    err_.fail(at, std::string(k.mcrouter) + (k.mcrouter_scalar != nullptr ? " should be a string or an object"
                                                                           : " should be an object"));
    return r;
  }
  std::vector<const char*> keys;
  for (const child_slot& c : k.children) {
    if (c.mcrouter != nullptr) keys.push_back(c.mcrouter);
  }
  for (const option_spec& o : k.options) {
    if (o.mcrouter != nullptr) keys.push_back(o.mcrouter);
  }
  err_.allow(json, k.mcrouter, keys);
  if (scalar_ok && !json.IsMap()) {
    // The string is the option's value: read it as the object {option: string}.
    YAML::Node object(YAML::NodeType::Map);
    if (json.IsScalar()) object[k.mcrouter_scalar] = json;
    json_kind_reader(f_, err_, object, at).read(k, r);
  } else {
    json_kind_reader(f_, err_, json, at).read(k, r);
  }
  using collapse = route_kind_info::collapse;
  if (k.mcrouter_collapse != collapse::None && r.children.empty()) return null_route(r.line);
  if (k.mcrouter_collapse == collapse::NullOrSingleton && r.children.size() == 1) return std::move(r.children[0]);
  return r;
}

// Children of a list route: `children` of an object, or the json itself
// ("AllSyncRoute|Pool|A", or a list).
std::vector<route_config> provider::children_of(const YAML::Node& json) {
  if (json.IsMap()) {
    const YAML::Node c = json["children"];
    return c ? f_.list(c) : std::vector<route_config>{};
  }
  return f_.list(json);
}

route_config provider::hash_route(const YAML::Node& json, const YAML::Node& at) {
  err_.allow(json, "HashRoute", {"children", "hash_func", "salt", "error_on_empty"});
  route_config r;
  r.kind = route_kind::Hash;
  r.line = err_.line(at);
  r.dist = kinds::distribution_kind::Ch3;
  if (json.IsMap()) {
    if (const YAML::Node f = json["hash_func"]) {
      const std::string fn = f.Scalar();
      if (fn == "Crc32") {
        r.dist = kinds::distribution_kind::McrouterCrc32;
      } else if (fn != "Ch3") {
        err_.fail(f, "HashRoute: hash_func '" + fn + "' is not supported by ithaca (Ch3 or Crc32)");
      }
    }
    salt(json, "HashRoute");
  }
  r.children = children_of(json);
  if (r.children.size() == 1) return std::move(r.children[0]);
  if (r.children.empty()) {
    bool error_on_empty = true;
    if (json.IsMap() && json["error_on_empty"] && !as_bool(json["error_on_empty"], error_on_empty)) {
      err_.fail(json["error_on_empty"], "HashRoute: error_on_empty is not a boolean");
    }
    if (!error_on_empty) return null_route(r.line);
    return module_node("error", route_format::Mcrouter, r.line, {{"message", "HashRoute with empty children"}});
  }
  return r;
}

void provider::salt(const YAML::Node& json, const std::string& what) {
  if (const YAML::Node s = json["salt"]; s && !s.Scalar().empty()) {
    err_.fail(s, what + ": a salt changes placement and is not supported by ithaca");
  }
}

void provider::failover_settings(const YAML::Node& json, route_config& r, const std::string& what) {
  if (const YAML::Node errors = json["failover_errors"]) {
    if (errors.IsSequence()) {
      error_names(errors, r.failover_errors, what);
    } else if (errors.IsMap()) {
      err_.allow(errors, what + " failover_errors", {"gets", "updates", "deletes"});
      if (errors["gets"]) error_names(errors["gets"], r.failover_errors_by_class[0], what);
      if (errors["updates"]) error_names(errors["updates"], r.failover_errors_by_class[1], what);
      if (errors["deletes"]) error_names(errors["deletes"], r.failover_errors_by_class[2], what);
    } else {
      err_.fail(errors, "Failover errors must be either an array or an object.");
    }
  }
  if (const YAML::Node limit = json["failover_limit"]) {
    double rate = 0, burst = 1000;
    if (!limit.IsMap() || !limit["rate"] || !as_number(limit["rate"], rate)) {
      err_.fail(limit, "FailoverRateLimiter: failover_limit needs a numeric `rate`");
      return;
    }
    err_.allow(limit, "failover_limit", {"rate", "burst"});
    if (limit["burst"] && !as_number(limit["burst"], burst)) {
      err_.fail(limit["burst"], "FailoverRateLimiter: burst is not a number");
    }
    rate = std::min(std::max(rate, 0.0), 1.0);  // mcrouter clamps both
    burst = std::max(burst, 1.0);
    if (rate == 0) {
      err_.fail(limit["rate"], "failover_limit: a rate of 0 (no failover after the first burst) is not supported by "
                          "ithaca; leave failover_limit out or give a rate above 0");
    }
    r.failover_rate = rate;
    r.failover_burst = burst;
  }
  if (const YAML::Node p = json["failover_policy"]) {
    err_.fail(p, what + ": failover_policy is not supported by ithaca (children are tried in order)");
  }
  for (const char* flag : {"failover_tag", "enable_lease_pairing"}) {
    bool on = false;
    if (const YAML::Node f = json[flag]; f && (!as_bool(f, on) || on)) {
      err_.fail(f, what + ": " + flag + " is not supported by ithaca");
    }
  }
}

void provider::error_names(const YAML::Node& list, std::vector<std::string>& out, const std::string& what) {
  if (!list.IsSequence()) {
    err_.fail(list, "List of failover errors is not an array.");
    return;
  }
  const std::vector<std::string>& known = known_failover_errors();
  for (const YAML::Node& e : list) {
    std::string name = e.Scalar();
    if (name.starts_with("mc_res_")) name = name.substr(7);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      err_.fail(e, what + ": Failover error '" + e.Scalar() + "' is not a valid error type.");
      continue;
    }
    out.push_back(name);
  }
}

route_config provider::failover(const YAML::Node& json, int ln) {
  err_.allow(json, "FailoverRoute", {"children", "failover_errors", "failover_limit", "failover_policy", "failover_tag",
                                "enable_lease_pairing"});
  route_config r;
  r.kind = route_kind::Failover;
  r.line = ln;
  r.children = children_of(json);
  if (json.IsMap()) failover_settings(json, r, "FailoverRoute");
  if (r.children.empty()) return null_route(ln);
  if (r.children.size() == 1) return std::move(r.children[0]);
  return r;
}

route_config provider::failover_exptime(const YAML::Node& json, const YAML::Node& at) {
  route_config r;
  r.kind = route_kind::FailoverExptime;
  r.line = err_.line(at);
  if (!json.IsMap()) {
    err_.fail(at, "FailoverWithExptimeRoute is not an object");
    return r;
  }
  err_.allow(json, "FailoverWithExptimeRoute", {"normal", "failover", "failover_exptime", "failover_errors",
                                           "failover_limit", "failover_policy", "failover_tag",
                                           "enable_lease_pairing"});
  if (!json["normal"]) {
    err_.fail(json, "FailoverWithExptimeRoute: normal not found");
    return r;
  }
  route_config normal = f_.one(json["normal"], "normal");
  normal.role = "normal";
  r.children.push_back(std::move(normal));
  r.exptime = 60;  // mcrouter's default failover_exptime
  if (const YAML::Node e = json["failover_exptime"]) {
    int64_t v = 0;
    if (!as_int(e, v) || v < 0 || v > 30 * 24 * 3600) {
      err_.fail(e, "FailoverWithExptimeRoute: failover_exptime is not an integer from 0 to 2592000");
    } else {
      r.exptime = static_cast<uint32_t>(v);
    }
  }
  if (const YAML::Node f = json["failover"]) {
    for (route_config& c : f_.list(f)) {
      c.role = "failover";
      r.children.push_back(std::move(c));
    }
  }
  failover_settings(json, r, "FailoverWithExptimeRoute");
  if (r.children.size() == 1) {  // no failover: the normal route alone
    route_config only = std::move(r.children[0]);
    only.role.clear();
    return only;
  }
  return r;
}

route_config provider::operation_selector(const YAML::Node& json, const YAML::Node& at) {
  if (!json.IsMap()) return f_.one(json, "OperationSelectorRoute");
  err_.allow(json, "OperationSelectorRoute", {"default_policy", "operation_policies"});
  route_config r;
  r.kind = route_kind::Operation;
  r.line = err_.line(at);
  const YAML::Node def = json["default_policy"];
  const YAML::Node ops = json["operation_policies"];
  if (!def && !ops) {
    err_.fail(at, "OperationSelectorRoute needs either 'default_policy' or 'operation_policies'");
    return r;
  }
  if (!ops) return f_.one(def, "default_policy");
  if (!ops.IsMap()) {
    err_.fail(ops, "OperationSelectorRoute: operation_policies is not an object");
    return r;
  }
  // ithaca selects by class: every operation mcrouter names maps onto one,
  // and two operations of a class must share a route.
  std::map<op_class, std::pair<std::string, std::string>> by_class;  // op, route as text
  for (const auto kv : ops) {
    const std::string op = kv.first.Scalar();
    op_class cls{};
    if (!op_class_of(op, cls)) {
      err_.fail(kv.first, "OperationSelectorRoute: operation '" + op + "' cannot be selected by ithaca (get, gets, "
                     "lease-get, metaget, set, add, replace, append, prepend, cas, lease-set, delete, incr, decr, "
                     "touch, gat, gats)");
      continue;
    }
    const std::string text = YAML::Dump(kv.second);
    if (auto it = by_class.find(cls); it != by_class.end()) {
      if (it->second.second != text) {
        err_.fail(kv.first, "OperationSelectorRoute: '" + it->second.first + "' and '" + op + "' are one class for "
                       "ithaca (" + to_string(cls) + ") and must have the same route");
      }
      continue;
    }
    by_class[cls] = {op, text};
    route_config child = f_.one(kv.second, "operation_policies");
    child.role = to_string(cls);
    r.children.push_back(std::move(child));
  }
  if (def) {
    route_config d = f_.one(def, "default_policy");
    d.role = "default";
    r.children.push_back(std::move(d));
  } else {
    for (size_t i = 0; i < kOpClasses; ++i) {
      if (by_class.count(static_cast<op_class>(i)) != 0) continue;
      // mcrouter answers an error where no policy applies
      route_config e =
          module_node("error", route_format::Mcrouter, r.line, {{"message", "no route for this operation"}});
      e.role = to_string(static_cast<op_class>(i));
      r.children.push_back(std::move(e));
    }
  }
  return r;
}

// mcrouter's ShadowRoute: one `normal` child and a `shadow` child per entry
// of `shadows` (key_fraction_range, requests_fraction; index_range only as
// [0, 1], the one normal child ithaca shadows). Without `shadows` the children
// are returned as they are, as mcrouter does. [the config loading thread; no
// lock] Errors are recorded and reading goes on, so one pass reports them
// all; the result is used only if there were none.
route_config provider::shadow(const YAML::Node& json, const YAML::Node& at) {
  route_config r;
  r.kind = route_kind::Shadow;
  r.line = err_.line(at);
  if (!json.IsMap()) {
    err_.fail(at, "ShadowRoute should be an object");
    return r;
  }
  err_.allow(json, "ShadowRoute", {"children", "shadows", "shadow_policy"});
  if (const YAML::Node p = json["shadow_policy"]; p && p.Scalar() != "default") {
    err_.fail(p, "ShadowRoute: shadow_policy '" + p.Scalar() + "' is not supported by ithaca (only \"default\")");
  }
  if (!json["children"]) {
    err_.fail(json, "ShadowRoute: children not found");
    return r;
  }
  std::vector<route_config> normal = f_.list(json["children"]);
  if (normal.size() != 1) {
    err_.fail(json["children"], "ShadowRoute: " + std::to_string(normal.size()) +
                               " children; ithaca shadows one route (give each child its own ShadowRoute)");
    return r;
  }
  if (!json["shadows"]) return std::move(normal[0]);  // mcrouter: the children as they are
  normal[0].role = "normal";
  r.children.push_back(std::move(normal[0]));
  const YAML::Node shadows = json["shadows"];
  if (!shadows.IsSequence()) {
    err_.fail(shadows, "ShadowRoute: shadows specified in route is not an array");
    return r;
  }
  for (const YAML::Node& s : shadows) {
    if (!s.IsMap() || !s["target"]) {
      err_.fail(s, "ShadowRoute shadows: each shadow is an object with a `target`");
      continue;
    }
    err_.allow(s, "ShadowRoute shadow", {"target", "key_fraction_range", "requests_fraction", "index_range"});
    route_config t = f_.one(s["target"], "target");
    t.role = "shadow";
    if (const YAML::Node kf = s["key_fraction_range"]) {
      double lo = 0, hi = 0;
      if (!kf.IsSequence() || kf.size() != 2 || !as_number(kf[0], lo) || !as_number(kf[1], hi) || lo < 0 ||
          lo > hi || hi > 1) {
        err_.fail(kf, "ShadowRoute: invalid key_fraction_range (two numbers, 0 <= start <= end <= 1)");
      } else {
        t.key_fraction_lo = lo;
        t.key_fraction_hi = hi;
      }
    }
    if (const YAML::Node rf = s["requests_fraction"]) {
      double f = 0;
      if (!as_number(rf, f) || f < 0 || f > 1) {
        err_.fail(rf, "ShadowRoute: requests_fraction is not a number from 0 to 1");
      } else {
        t.request_fraction = f;
      }
    }
    if (const YAML::Node ir = s["index_range"]) {
      int64_t a = -1, b = -1;
      if (!ir.IsSequence() || ir.size() != 2 || !as_int(ir[0], a) || !as_int(ir[1], b) || a != 0 || b < 1) {
        err_.fail(ir, "ShadowRoute: index_range other than [0, 1] (shadowing some of several children) is not "
                 "supported by ithaca");
      }
    }
    r.children.push_back(std::move(t));
  }
  return r;
}

route_config provider::rate_limit(const YAML::Node& json, const YAML::Node& at) {
  route_config r;
  r.kind = route_kind::RateLimit;
  r.line = err_.line(at);
  if (!json.IsMap()) {
    err_.fail(at, "RateLimitRoute is not an object");
    return r;
  }
  err_.allow(json, "RateLimitRoute", {"target", "rates", "fallback"});
  if (!json["target"]) err_.fail(json, "RateLimitRoute: target not found");
  if (!json["rates"]) err_.fail(json, "RateLimitRoute: rates not found");
  if (!json["target"] || !json["rates"]) return r;
  route_config target = f_.one(json["target"], "target");
  target.role = "target";
  r.children.push_back(std::move(target));
  rates(json["rates"], r);
  if (const YAML::Node f = json["fallback"]) {
    route_config fb = f_.one(f, "fallback");
    fb.role = "fallback";
    r.children.push_back(std::move(fb));
  }
  return r;
}

// mcrouter's RateLimiter: {gets,sets,deletes}_{rate,burst}; burst defaults
// to the rate.
void provider::rates(const YAML::Node& json, route_config& r) {
  if (!json.IsMap()) {
    err_.fail(json, "RateLimiter settings json is not an object");
    return;
  }
  err_.allow(json, "rates", {"gets_rate", "gets_burst", "sets_rate", "sets_burst", "deletes_rate", "deletes_burst"});
  const std::pair<const char*, op_class> classes[] = {
      {"gets", op_class::Get}, {"sets", op_class::Set}, {"deletes", op_class::Delete}};
  for (const auto& [name, cls] : classes) {
    const std::string rate_key = std::string(name) + "_rate";
    const std::string burst_key = std::string(name) + "_burst";
    const size_t i = static_cast<size_t>(cls);
    if (!json[rate_key]) {
      if (json[burst_key]) err_.fail(json[burst_key], burst_key + " without " + rate_key);
      continue;
    }
    if (!as_number(json[rate_key], r.rate[i]) || r.rate[i] <= 0) {
      err_.fail(json[rate_key], rate_key + " is not a positive number");
      continue;
    }
    r.burst[i] = r.rate[i];
    if (json[burst_key] && (!as_number(json[burst_key], r.burst[i]) || r.burst[i] <= 0)) {
      err_.fail(json[burst_key], burst_key + " is not a positive number");
    }
  }
}



// mcrouter's PoolRoute (object or "Pool|name" string): a `pool` route with
// reliable deletes on (mcrouter's asynclog) over the named pool placed by
// its hash (Ch3, WeightedCh3 with weights from the pool or the route, or
// Crc32: each placement its own pool config, pools::placed), wrapped in a
// rate_limit route when it has `rates`. [the config loading thread; no lock]
route_config provider::pool_route(const YAML::Node& json, const YAML::Node& at) {
  route_config r;
  r.kind = route_kind::Pool;
  r.line = err_.line(at);
  r.reliable_deletes = true;  // mcrouter wraps a PoolRoute in its asynclog
  // reset(), not =: assigning to a YAML::Node writes through to the node
  // it refers to.
  YAML::Node pool_json;
  pool_json.reset(json);
  if (json.IsMap()) {
    err_.allow(json, "PoolRoute", {"pool", "hash", "asynclog", "asynclog_name", "rates"});
    if (!json["pool"]) {
      err_.fail(at, "PoolRoute: pool not found");
      return r;
    }
    pool_json.reset(json["pool"]);
    if (const YAML::Node a = json["asynclog"]; a && !as_bool(a, r.reliable_deletes)) {
      err_.fail(a, "PoolRoute: asynclog is not a boolean");
    }
  } else if (!json.IsScalar()) {
    err_.fail(at, "PoolRoute should be object or string");
    return r;
  }
  const pools::pool_def* d = pools_.find(pool_json, at);
  if (d == nullptr) return r;
  std::vector<double> weights = d->weights;
  kinds::distribution_kind dist = weights.empty() ? kinds::distribution_kind::Ch3 : kinds::distribution_kind::WeightedCh3;
  if (json.IsMap()) {
    if (const YAML::Node h = json["hash"]) {
      std::string fn;
      if (h.IsScalar()) {
        fn = h.Scalar();
      } else if (h.IsMap()) {
        err_.allow(h, "PoolRoute hash", {"hash_func", "salt", "weights"});
        salt(h, "PoolRoute hash");
        fn = h["hash_func"] ? h["hash_func"].Scalar() : "";
        if (const YAML::Node w = h["weights"]) {
          weights.clear();
          double f = 0;
          for (const YAML::Node& x : w) weights.push_back(as_number(x, f) ? f : -1);
        }
      } else {
        err_.fail(h, "PoolRoute: hash is not object/string");
      }
      if (fn == "Ch3") {
        dist = kinds::distribution_kind::Ch3;
      } else if (fn == "Crc32") {
        dist = kinds::distribution_kind::McrouterCrc32;
      } else if (fn == "WeightedCh3") {
        dist = kinds::distribution_kind::WeightedCh3;
      } else if (!fn.empty()) {
        err_.fail(h, "PoolRoute: hash_func '" + fn + "' is not supported by ithaca (Ch3, WeightedCh3 or Crc32)");
      }
    }
  }
  if (dist == kinds::distribution_kind::WeightedCh3 &&
      (weights.size() != d->base.servers.size() ||
       std::any_of(weights.begin(), weights.end(), [](double w) { return w < 0 || w > 1; }))) {
    err_.fail(at, "PoolRoute: WeightedCh3 needs one weight from 0 to 1 per server of pool '" + d->base.name + "'");
    return r;
  }
  r.pool = pools_.placed(*d, dist, weights);
  if (json.IsMap() && json["rates"]) {  // PoolRoute's own rate limit
    route_config limited;
    limited.kind = route_kind::RateLimit;
    limited.line = r.line;
    rates(json["rates"], limited);
    r.role = "target";
    limited.children.push_back(std::move(r));
    return limited;
  }
  return r;
}

// "Pool|A": each server of A on its own (mcrouter's destinations, which
// AllSyncRoute and the like take as children).
std::vector<route_config> provider::pool_servers(const YAML::Node& json, const YAML::Node& at) {
  const pools::pool_def* d = pools_.find(json, at);
  if (d == nullptr) return {};
  std::vector<route_config> out;
  for (const std::string& name : pools_.each_server(*d)) {
    route_config r;
    r.kind = route_kind::Pool;
    r.pool = name;
    r.line = err_.line(at);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace ithaca::config::mcrouter
