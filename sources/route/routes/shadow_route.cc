#include "shadow_route.h"

#include <random>

#include "async_runner.h"
#include "command_class.h"
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
  const double where = key_fraction(req.key());
  for (const shadow_target& s : shadows_) {
    if (where >= s.key_lo && where < s.key_hi && s.request_fraction > 0) out.push_back(s.target);
  }
  return out;
}

dispatch_status shadow_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  const protocol::request& req = slot.req;
  // Data commands only: flush_all and me are not mirrored.
  const protocol::command_class c = protocol::classify(req);
  if (c != protocol::command_class::Flush && c != protocol::command_class::Debug && !req.keys.empty()) {
    const double where = key_fraction(req.key());
    thread_local std::minstd_rand rng{std::random_device{}()};
    for (const shadow_target& s : shadows_) {
      if (where < s.key_lo || where >= s.key_hi) continue;
      if (s.request_fraction < 1 && std::uniform_real_distribution<double>(0, 1)(rng) >= s.request_fraction) continue;
      if (env.async != nullptr && env.async->send(*s.target, req)) {
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
};
struct shadow_options final : config::route_options {
  std::vector<shadow_share> shares;
  int policy = 0;  // mcrouter's shadow_policy: only "default"
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

void read_shadows(config::route_kind_reader& in, const char* key, config::route_config& r,
                  config::route_options& opts) {
  auto& o = static_cast<shadow_options&>(opts);
  if (in.format() == config::route_format::Yaml) {
    read_yaml_shadows(in, *in.value(key), r, o);
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
  }
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
  for (std::size_t i = 0; i < targets.size() && i < o.shares.size(); ++i) {
    shadows.push_back(shadow_target{targets[i], o.shares[i].key_lo, o.shares[i].key_hi, o.shares[i].request_fraction});
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
