#include "shadow_route.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <limits>
#include <random>

#include "async_runner.h"
#include "command_class.h"
#include "hash/hash_functions.h"
#include "mcrouter_json.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"
#include "yaml_section.h"

namespace ithaca::route {

shadow_route::shadow_route(std::string name, const route& normal, std::vector<shadow_target> shadows)
    : route(std::move(name)), normal_(normal), shadows_(std::move(shadows)) {}

std::vector<const route*> shadow_route::children() const {
  std::vector<const route*> out{&normal_};
  for (const shadow_target& s : shadows_) out.push_back(s.target);
  return out;
}

std::vector<const route*> shadow_route::targets_for(const protocol::request& req) const {
  std::vector<const route*> out{&normal_};
  const protocol::command_class c = protocol::classify(req);
  if (c == protocol::command_class::Flush || c == protocol::command_class::Debug || req.keys.empty()) return out;
  for (const shadow_target& s : shadows_) {
    if (takes(s, req.key()) && s.request_fraction > 0) out.push_back(s.target);
  }
  return out;
}

bool shadow_route::takes(const shadow_target& s, std::string_view key) {
  if (!s.mcrouter) {
    const double where = key_fraction(key);
    return where >= s.key_lo && where < s.key_hi;
  }
  const std::string_view routing = key.substr(0, key.find("|#|"));
  if (!s.keys.empty()) return std::binary_search(s.keys.begin(), s.keys.end(), routing);
  if (s.pool != nullptr) {
    const std::uint32_t server = s.pool->locate(key);
    if (server < s.index_lo || server >= s.index_hi) return false;
  }
  // As mcrouter: each end times 2^32-1, truncated; both ends included. A
  // runtime variable's range, once set, is the range.
  double key_lo = s.key_lo, key_hi = s.key_hi;
  if (s.rv != nullptr && s.rv->set.load(std::memory_order_acquire)) {
    key_lo = s.rv->lo.load(std::memory_order_relaxed);
    key_hi = s.rv->hi.load(std::memory_order_relaxed);
  }
  constexpr double kTop = std::numeric_limits<std::uint32_t>::max();
  const auto lo = static_cast<std::uint64_t>(key_lo * kTop), hi = static_cast<std::uint64_t>(key_hi * kTop);
  const std::uint32_t h = proxy::spooky_v2_hash32(routing, 0);
  return lo <= h && h <= hi;
}

dispatch_status shadow_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  const protocol::request& req = slot.req;
  // Data commands only: flush_all and me are not mirrored.
  const protocol::command_class c = protocol::classify(req);
  if (c != protocol::command_class::Flush && c != protocol::command_class::Debug && !req.keys.empty()) {
    thread_local std::minstd_rand rng{std::random_device{}()};
    for (const shadow_target& s : shadows_) {
      if (!takes(s, req.key())) continue;
      if (s.request_fraction < 1 && std::uniform_real_distribution<double>(0, 1)(rng) >= s.request_fraction) continue;
      if (env.async != nullptr && env.async->send(*s.target, req, true)) {
        route_counters::add(counters().shadow_sent);
      } else {
        route_counters::add(counters().async_dropped);
      }
    }
  }
  return normal_.dispatch(slot, env);
}

}  // namespace ithaca::route

// ---- the kind: options, how the config formats spell them, build.

namespace ithaca::route {

namespace {

// Each shadow's share, in the order of the node's "shadow" children.
struct shadow_share {
  double key_lo = 0, key_hi = 1, request_fraction = 1;
  bool mcrouter = false;                     // placed as mcrouter places keys (shadow_target)
  std::vector<std::string> keys;             // keys_to_shadow, sorted
  std::uint32_t index_lo = 0, index_hi = 0;  // a PoolRoute's: its servers [lo, hi)
  std::string rv;                            // key_fraction_range_rv: a runtime variable's name
};
struct shadow_options final : config::route_options {
  std::vector<shadow_share> shares;
  int policy = 0;    // mcrouter's shadow_policy: only "default"
  std::string pool;  // a PoolRoute's shadows: its pool (whose servers index_range counts)
};

// A key fraction range [A, B] with 0 <= A <= B <= 1; false: not one.
bool key_range(const YAML::Node& v, shadow_share& out) {
  double lo = 0, hi = 0;
  if (!v.IsSequence() || v.size() != 2 || !config::mcrouter::as_number(v[0], lo) ||
      !config::mcrouter::as_number(v[1], hi) || lo < 0 || lo > hi || hi > 1) {
    return false;
  }
  out.key_lo = lo;
  out.key_hi = hi;
  return true;
}

// YAML: shadows: [{route: ROUTE, key_fraction: [A, B], request_fraction: F}].
void read_yaml_shadows(config::route_kind_reader& in, const YAML::Node& list, config::route_config& r,
                       shadow_options& o) {
  if (!list.IsSequence() || list.size() == 0) {
    in.fail_at("shadows",
               "shadows: expected a list of at least one {route: ROUTE, key_fraction: [A, B], "
               "request_fraction: F}, got " +
                   config::describe_node(list));
    return;
  }
  for (const YAML::Node& item : list) {
    if (!item.IsMap()) {
      in.fail_node(item, "shadows: each shadow is a mapping with `route:`, got " + config::describe_node(item));
      continue;
    }
    in.check_keys(item, "shadows", {"route", "key_fraction", "request_fraction"});
    if (!item["route"]) {
      in.fail_node(item, "a shadow needs `route:` (where the copies go)");
      continue;
    }
    r.children.push_back(in.route_at(item["route"], "shadow", "route"));
    shadow_share share;
    if (const YAML::Node kf = item["key_fraction"]; kf && !key_range(kf, share)) {
      in.fail_node(kf,
                   "key_fraction: expected [A, B] with 0 <= A <= B <= 1 (the share of the key hash space whose "
                   "keys are shadowed), got " +
                       config::describe_node(kf));
    }
    in.number_in(item, "request_fraction", share.request_fraction, 0, 1, "a fraction from 0 to 1", false);
    o.shares.push_back(share);
  }
}

// mcrouter: shadows: [{target, key_fraction_range, requests_fraction,
// index_range}]; index_range only as [0, 1] (the one normal child ithaca
// shadows).
void read_mcrouter_shadows(config::route_kind_reader& in, const YAML::Node& list, config::route_config& r,
                           shadow_options& o) {
  if (!list.IsSequence()) {
    in.fail_node(list, "ShadowRoute: shadows specified in route is not an array");
    return;
  }
  for (const YAML::Node& item : list) {
    if (!item.IsMap() || !item["target"]) {
      in.fail_node(item, "ShadowRoute shadows: each shadow is an object with a `target`");
      continue;
    }
    in.check_keys(item, "ShadowRoute shadow", {"target", "key_fraction_range", "requests_fraction", "index_range"});
    r.children.push_back(in.route_at(item["target"], "shadow", "target"));
    shadow_share share;
    share.mcrouter = true;
    if (const YAML::Node kf = item["key_fraction_range"]; kf && !key_range(kf, share)) {
      in.fail_node(kf, "ShadowRoute: invalid key_fraction_range (two numbers, 0 <= start <= end <= 1)");
    }
    if (const YAML::Node rf = item["requests_fraction"]) {
      double f = 0;
      if (!config::mcrouter::as_number(rf, f) || f < 0 || f > 1) {
        in.fail_node(rf, "ShadowRoute: requests_fraction is not a number from 0 to 1");
      } else {
        share.request_fraction = f;
      }
    }
    if (const YAML::Node ir = item["index_range"]) {
      int64_t a = -1, b = -1;
      if (!ir.IsSequence() || ir.size() != 2 || !config::mcrouter::as_int(ir[0], a) ||
          !config::mcrouter::as_int(ir[1], b) || a != 0 || b < 1) {
        in.fail_node(ir,
                     "ShadowRoute: index_range other than [0, 1] (shadowing some of several children) is not "
                     "supported by ithaca");
      }
    }
    o.shares.push_back(share);
  }
}

// One shadow of a PoolRoute into `share`, as mcrouter's ShadowSettings::create
// reads it; false (the shadow left out, as mcrouter leaves it out with a
// log line) when it cannot be used.
bool pool_shadow_share(config::route_kind_reader& in, const YAML::Node& item, shadow_share& share) {
  if (!item.IsMap() || !item["target"] || !in.routable(item["target"])) return false;
  share.mcrouter = true;
  share.key_lo = share.key_hi = 0;  // mcrouter's defaults: no key share, no server
  if (const YAML::Node kf = item["key_fraction_range"]; kf && !key_range(kf, share)) return false;
  if (const YAML::Node ir = item["index_range"]) {
    int64_t a = -1, b = -1;
    if (!ir.IsSequence() || ir.size() != 2 || !config::mcrouter::as_int(ir[0], a) ||
        !config::mcrouter::as_int(ir[1], b) || a < 0 || a > b || b > UINT32_MAX) {
      return false;
    }
    share.index_lo = static_cast<std::uint32_t>(a);
    share.index_hi = static_cast<std::uint32_t>(b);
  }
  if (const YAML::Node rv = item["key_fraction_range_rv"]) {
    if (!rv.IsScalar()) return false;
    share.rv = rv.Scalar();
  }
  if (const YAML::Node k = item["keys_to_shadow"]) {
    if (!k.IsSequence()) return false;
    for (const YAML::Node& key : k) {
      if (!key.IsScalar()) return false;
      share.keys.push_back(key.Scalar());
    }
    if (!share.keys.empty() && (item["index_range"] || item["key_fraction_range"] || item["key_fraction_range_rv"])) {
      return false;  // mcrouter: keys_to_shadow mixes with no range
    }
    std::sort(share.keys.begin(), share.keys.end());
  }
  if (const YAML::Node rf = item["requests_fraction"]) {
    if (!config::mcrouter::as_number(rf, share.request_fraction)) return false;
  }
  // mcrouter builds a shadow only for the destinations [lo, hi) (any, with
  // keys_to_shadow): one that covers none shadows nothing.
  return !share.keys.empty() || share.index_lo < share.index_hi;
}

// mcrouter's PoolRoute `shadows`: the list as mcrouter's makeShadowRoutes
// reads it, which leaves out a shadow it cannot use (not an object, no
// target, a target that names no route, a bad range) and goes on; its test
// config (test_shadow.json) writes such entries on purpose. The key's share
// is of SpookyHash's routing key hash, [A, B] both included; index_range
// [A, B) names the pool's servers whose keys are shadowed (none without it,
// unless keys_to_shadow lists keys); key_fraction_range_rv names a runtime
// variable (--runtime-vars-file, runtime_vars.h) whose range, when the file
// gives one, replaces key_fraction_range.
void read_pool_shadows(config::route_kind_reader& in, const YAML::Node& list, config::route_config& r,
                       shadow_options& o) {
  if (!list.IsSequence()) {
    in.fail_node(list, "PoolRoute: shadows must be an array.");
    return;
  }
  for (const YAML::Node& item : list) {
    shadow_share share;
    if (!pool_shadow_share(in, item, share)) continue;
    r.children.push_back(in.route_at(item["target"], "shadow", "target"));
    o.shares.push_back(std::move(share));
  }
}

void read_shadows(config::route_kind_reader& in, const char* key, config::route_config& r,
                  config::route_options& opts) {
  auto& o = static_cast<shadow_options&>(opts);
  if (in.format() == config::route_format::Yaml) {
    read_yaml_shadows(in, *in.value(key), r, o);
  } else if (const YAML::Node* pool = in.value("pool_route")) {  // mcrouter_routes.cc, pool_shadows
    o.pool = pool->Scalar();
    read_pool_shadows(in, *in.value(key), r, o);
  } else {
    read_mcrouter_shadows(in, *in.value(key), r, o);
  }
}

std::string show_shadows(const config::route_options& opts) {
  std::string out;
  for (const shadow_share& s : static_cast<const shadow_options&>(opts).shares) {
    if (!out.empty()) out += ',';
    out += '[';
    out += config::number_text(s.key_lo);
    out += ',';
    out += config::number_text(s.key_hi);
    out += ")x";
    out += config::number_text(s.request_fraction);
    if (!s.keys.empty()) {
      out += " keys:" + std::to_string(s.keys.size());
    } else if (s.index_hi > 0) {
      out += " servers:[" + std::to_string(s.index_lo) + "," + std::to_string(s.index_hi) + ")";
    }
  }
  const std::string& pool = static_cast<const shadow_options&>(opts).pool;
  if (!pool.empty()) out += " of " + pool;
  return out;
}

constexpr const char* kPolicies[] = {"default"};

constexpr config::child_slot kShadowSlots[] = {
    {"normal", "normal", nullptr, false, 1},
    // mcrouter: the normal route is its one child
    {"normal", nullptr, "children", true, 1, nullptr, false, 1},
};
constexpr config::option_spec kShadowOptions[] = {
    // Required in YAML; without it mcrouter's ShadowRoute is its child.
    config::custom_option("shadows", nullptr, "a list of {route: ROUTE, key_fraction: [A, B], request_fraction: F}",
                          read_shadows, show_shadows,
                          "[{route: pool:main, key_fraction: [0, 0.5], request_fraction: 0.5}]", nullptr, true),
    config::custom_option(
        nullptr, "shadows", "a list of {target: ROUTE, key_fraction_range: [A, B], requests_fraction: F}", read_shadows,
        show_shadows, nullptr, "[{\"target\": \"PoolRoute|main\", \"key_fraction_range\": [0, 0.5]}]"),
    config::choice_option<&shadow_options::policy>(nullptr, "shadow_policy", kPolicies,
                                                   "mcrouter's shadow policy: only \"default\""),
};

// mcrouter: exactly one child, the normal route; without `shadows` that
// route as it is (as mcrouter does).
void finish_shadow(config::route_kind_reader& in, config::route_config& r) {
  if (in.format() != config::route_format::Mcrouter) return;
  const std::size_t normal = r.with_role("normal").size();
  if (!in.value("children")) {
    in.fail("ShadowRoute: children not found");
  } else if (normal != 1) {
    in.fail_at("children", "ShadowRoute: " + std::to_string(normal) +
                               " children; ithaca shadows one route (give each child its own ShadowRoute)");
  } else if (!in.value("shadows")) {
    config::become_only_child(r);
  }
}

const route* build_shadow(tree_builder& b, const config::route_config& r) {
  const route* normal = b.child(r, "normal", false);
  if (normal == nullptr) return nullptr;
  std::vector<const route*> targets;
  if (!b.children(r, "shadow", true, 0, targets)) return nullptr;
  if (targets.empty()) return b.fail(r, "needs at least one `shadow` route");
  const auto& o = config::options_of<shadow_options>(r);
  std::vector<shadow_target> shadows;
  const proxy::pool* pool = nullptr;
  if (!o.pool.empty()) {
    pool = b.pool(o.pool).get();  // the tree keeps its pools
    if (pool == nullptr) return b.fail(r, "names pool '" + o.pool + "', which is not under `pools:`");
  }
  for (std::size_t i = 0; i < targets.size() && i < o.shares.size(); ++i) {
    const shadow_share& sh = o.shares[i];
    shadow_target t{targets[i], sh.key_lo, sh.key_hi, sh.request_fraction};
    t.mcrouter = sh.mcrouter;
    t.keys = sh.keys;
    t.pool = pool;
    t.index_lo = sh.index_lo;
    t.index_hi = sh.index_hi;
    if (!sh.rv.empty()) t.rv = runtime_range_slot(sh.rv);
    shadows.push_back(std::move(t));
  }
  return b.add<shadow_route>(b.name_of(r), *normal, std::move(shadows));
}

constexpr config::route_kind_info kShadowInfo{
    "shadow",
    "ShadowRoute",
    "the normal child, and a copy of a share of the requests to each shadow",
    kShadowSlots,
    kShadowOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> { return std::make_shared<shadow_options>(); },
    config::route_kind_info::collapse::None,
    finish_shadow,
};

}  // namespace

extern constinit const kind_module kShadowKind{kShadowInfo, build_shadow};

}  // namespace ithaca::route
