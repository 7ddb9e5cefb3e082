#include "prefix_route.h"

#include <algorithm>

#include "handle_walk.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "yaml_section.h"

#include <algorithm>
#include <functional>

namespace ithaca::route {

namespace {

std::vector<const route*> targets_of(const std::vector<std::pair<std::string, const route*>>& by_prefix,
                                     const route& fallback) {
  std::vector<const route*> t;
  for (const auto& [prefix, r] : by_prefix) t.push_back(r);
  t.push_back(&fallback);
  return t;
}

}  // namespace

prefix_route::prefix_route(std::string name, std::vector<std::pair<std::string, const route*>> by_prefix,
                           const route& fallback)
    : selector_route(std::move(name), targets_of(by_prefix, fallback), true), fallback_(by_prefix.size()) {
  for (std::size_t i = 0; i < by_prefix.size(); ++i) {
    index_.emplace(by_prefix[i].first, i);
    lengths_.push_back(by_prefix[i].first.size());
  }
  std::sort(lengths_.begin(), lengths_.end(), std::greater<>());
  lengths_.erase(std::unique(lengths_.begin(), lengths_.end()), lengths_.end());
}

std::size_t prefix_route::pick(const protocol::request&, std::string_view key) const {
  for (const std::size_t len : lengths_) {
    if (len > key.size()) continue;
    auto it = index_.find(key.substr(0, len));
    if (it != index_.end()) return it->second;
  }
  return fallback_;
}

void prefix_route::walk_handles(const protocol::request& req, handle_walk& w) const {
  for (const route* t : targets_for(req)) w.same_level(*t, req);
}

}  // namespace ithaca::route

// ---- the kind: options, how the config formats spell them, build.

namespace ithaca::route {

namespace {

struct prefix_options final : config::route_options {
  std::vector<std::string> prefixes;  // of the "prefix" children, in order ("" matches every key)
};

// YAML `prefixes:` / mcrouter's `policies`: {PREFIX: ROUTE, ...}, a prefix once.
void read_prefixes(config::route_kind_reader& in, const char* key, config::route_config& r,
                   config::route_options& opts) {
  auto& o = static_cast<prefix_options&>(opts);
  const YAML::Node& v = *in.value(key);
  if (!v.IsMap()) {
    in.fail_at(key, in.format() == config::route_format::Yaml
                        ? "prefixes: expected a mapping of key prefixes to routes, got " + config::describe_node(v)
                        : std::string("PrefixSelectorRoute: policies is not an object"));
    return;
  }
  for (const auto kv : v) {
    const std::string match = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (std::find(o.prefixes.begin(), o.prefixes.end(), match) != o.prefixes.end()) {
      in.fail_node(kv.first, std::string(key) + ": the prefix '" + match + "' is listed twice");
      continue;
    }
    o.prefixes.push_back(match);
    r.children.push_back(in.route_at(kv.second, "prefix", key));
  }
}

std::string show_prefixes(const config::route_options& opts) {
  std::string out;
  for (const std::string& p : static_cast<const prefix_options&>(opts).prefixes) {
    if (!out.empty()) out += ',';
    out += p;
  }
  return out;
}

constexpr config::child_slot kPrefixSlots[] = {
    {"default", "default", "wildcard", false, 0},
};
constexpr config::option_spec kPrefixOptions[] = {
    config::custom_option("prefixes", "policies", "key prefix: route (the longest prefix of a key picks its route)",
                          read_prefixes, show_prefixes, "{\"user:\": pool:main}", "{\"user:\": \"PoolRoute|main\"}"),
};

void finish_prefix(config::route_kind_reader& in, config::route_config& r) {
  if (!in.value(in.format() == config::route_format::Yaml ? "prefixes" : "policies") &&
      r.with_role("default").empty()) {
    in.fail(in.format() == config::route_format::Yaml
                ? "a prefix route needs `prefixes:` (key prefix: route) and usually `default:` (the route of keys no "
                  "prefix matches)"
                : "PrefixSelectorRoute: no policies/wildcard");
  }
}

const route* build_prefix(tree_builder& b, const config::route_config& r) {
  const auto& o = config::options_of<prefix_options>(r);
  std::vector<const route*> targets;
  if (!b.children(r, "prefix", false, 0, targets)) return nullptr;
  std::vector<std::pair<std::string, const route*>> by_prefix;
  for (std::size_t i = 0; i < targets.size() && i < o.prefixes.size(); ++i)
    by_prefix.emplace_back(o.prefixes[i], targets[i]);
  const route* fallback = nullptr;
  if (r.with_role("default").empty()) {
    config::route_config none = config::module_node("error", config::route_format::Yaml, r.line,
                                                    {{"message", "no route for this key (no prefix matches)"}});
    none.name = "no_prefix";
    fallback = b.build(none);
  } else {
    fallback = b.child(r, "default", false);
  }
  if (fallback == nullptr) return nullptr;
  return b.add<prefix_route>(b.name_of(r), std::move(by_prefix), *fallback);
}

constexpr config::route_kind_info kPrefixInfo{
    "prefix",
    "PrefixSelectorRoute",
    "the longest matching key prefix picks the child",
    kPrefixSlots,
    kPrefixOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> { return std::make_shared<prefix_options>(); },
    config::route_kind_info::collapse::None,
    finish_prefix,
};

}  // namespace

extern constinit const kind_module kPrefixKind{kPrefixInfo, build_prefix};

}  // namespace ithaca::route
