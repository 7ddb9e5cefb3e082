// The `routing_group` route (mcrouter's RoutingGroupRoute): a child per
// carbon routing group, the default for the rest. The groups are carbon's
// (MemcacheRoutingGroups.h): get_like (get, gets, gat, gats, lease-get,
// metaget; meta mg), update_like (set, add, replace, append, prepend, cas,
// lease-set; ms), delete_like (delete; md), arithmetic_like (incr, decr; ma).
// Touch, flush_all and the rest belong to none: the default. Unlike
// `operation`, gat and gats go with the gets.
#include <array>
#include <map>
#include <string>

#include "command_class.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "selector_route.h"

namespace ithaca::route {

namespace {

constexpr std::size_t kRoutingGroups = 4;
constexpr const char* kRoutingGroupNames[kRoutingGroups] = {"get_like", "update_like", "delete_like",
                                                            "arithmetic_like"};

// A request's group (an index into kRoutingGroupNames), kRoutingGroups for none.
std::size_t routing_group_of(const protocol::request& req) {
  if (req.cmd == protocol::command::Gat || req.cmd == protocol::command::Gats) return 0;
  switch (protocol::operation_of(req)) {
    case kinds::op_class::Get: return 0;
    case kinds::op_class::Set: return 1;
    case kinds::op_class::Delete: return 2;
    case kinds::op_class::Arithmetic: return 3;
    default: return kRoutingGroups;
  }
}

class routing_group_route final : public selector_route {
 public:
  // targets: the default first, then the groups' routes; target_of[g]: the
  // index of group g's (0: the default).
  routing_group_route(std::string name, std::vector<const route*> targets,
                      const std::array<std::size_t, kRoutingGroups>& target_of)
      : selector_route(std::move(name), std::move(targets), false), target_of_(target_of) {}
  const char* kind() const override { return "routing_group"; }

 protected:
  std::size_t pick(const protocol::request& req, std::string_view) const override {
    const std::size_t g = routing_group_of(req);
    return g < kRoutingGroups ? target_of_[g] : 0;
  }

 private:
  std::array<std::size_t, kRoutingGroups> target_of_;
};

// ---- the kind: options, how the config formats spell them, build.

struct routing_group_options final : config::route_options {};

// mcrouter's routing_group_policies: {GROUP: ROUTE}.
void read_routing_group_policies(config::route_kind_reader& in, const char* key, config::route_config& r,
                                 config::route_options&) {
  const YAML::Node& groups = *in.value(key);
  if (!groups.IsMap()) {
    in.fail_node(groups, "RoutingGroupRoute: routing_group_policies is not an object");
    return;
  }
  std::map<std::string, bool> seen;
  for (const auto kv : groups) {
    const std::string g = kv.first.IsScalar() ? kv.first.Scalar() : "";
    bool known = false;
    for (const char* n : kRoutingGroupNames) known = known || g == n;
    if (!known) {
      in.fail_node(kv.first, "RoutingGroupRoute: " + g + " is not a valid routing group.");
      continue;
    }
    if (seen[g]) {
      in.fail_node(kv.first, "RoutingGroupRoute: " + g + " is a duplicate key!");
      continue;
    }
    seen[g] = true;
    r.children.push_back(in.route_at(kv.second, g.c_str(), "routing_group_policies"));
  }
}

constexpr config::child_slot kRoutingGroupSlots[] = {
    {"get_like", "get_like", nullptr, false, 0},        {"update_like", "update_like", nullptr, false, 0},
    {"delete_like", "delete_like", nullptr, false, 0},  {"arithmetic_like", "arithmetic_like", nullptr, false, 0},
    {"default", "default", "default_policy", false, 0},
};
constexpr config::option_spec kRoutingGroupOptions[] = {
    config::custom_option(nullptr, "routing_group_policies",
                          "mcrouter: a route by routing group (get_like, update_like, delete_like, arithmetic_like)",
                          read_routing_group_policies, config::show_nothing, nullptr,
                          "{\"get_like\": \"PoolRoute|main\"}"),
};

// mcrouter: default_policy or routing_group_policies; default_policy alone
// is that route. A group with no route and no default: an error reply.
void finish_routing_group(config::route_kind_reader& in, config::route_config& r) {
  bool any_group = false;
  for (const char* g : kRoutingGroupNames) any_group = any_group || !r.with_role(g).empty();
  const bool has_default = !r.with_role("default").empty();
  if (!any_group && !has_default) {
    in.fail(in.format() == config::route_format::Yaml
                ? std::string("a routing_group route needs `default:` or a route for a group (get_like, "
                              "update_like, delete_like, arithmetic_like)")
                : std::string("RoutingGroupRoute needs either 'default_policy' or 'routing_group_policies'"));
    return;
  }
  if (in.format() == config::route_format::Mcrouter && !in.value("routing_group_policies")) {
    config::become_only_child(r);
  }
}

const route* build_routing_group(tree_builder& b, const config::route_config& r) {
  std::vector<const route*> targets;
  if (r.with_role("default").empty()) {
    config::route_config e = config::module_node("error", config::route_format::Mcrouter, r.line,
                                                 {{"message", "no route for this routing group"}});
    targets.push_back(b.build(e));
  } else {
    targets.push_back(b.child(r, "default", false));
  }
  if (targets[0] == nullptr) return nullptr;
  std::array<std::size_t, kRoutingGroups> target_of{};
  for (std::size_t g = 0; g < kRoutingGroups; ++g) {
    if (r.with_role(kRoutingGroupNames[g]).empty()) continue;
    const route* t = b.child(r, kRoutingGroupNames[g], false);
    if (t == nullptr) return nullptr;
    target_of[g] = targets.size();
    targets.push_back(t);
  }
  return b.add<routing_group_route>(b.name_of(r), std::move(targets), target_of);
}

constexpr config::route_kind_info kRoutingGroupInfo{
    "routing_group",
    "RoutingGroupRoute",
    "a child per routing group (get_like, update_like, delete_like, arithmetic_like), with a default",
    kRoutingGroupSlots,
    kRoutingGroupOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> {
      return std::make_shared<routing_group_options>();
    },
    config::route_kind_info::collapse::ScalarIsChild,
    finish_routing_group,
};

}  // namespace

extern constinit const kind_module kRoutingGroupKind{kRoutingGroupInfo, build_routing_group};

}  // namespace ithaca::route
