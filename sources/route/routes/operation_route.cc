#include "operation_route.h"

#include <map>
#include <string>

#include "route_kind.h"
#include "route_kind_reader.h"

namespace ithaca::route {

namespace {

std::vector<const route*> targets_of(const std::array<const route*, operation_route::kClasses>& by_class,
                                     const route& fallback) {
  std::vector<const route*> t{&fallback};
  for (const route* r : by_class) {
    if (r != nullptr) t.push_back(r);
  }
  return t;
}

}  // namespace

operation_route::operation_route(std::string name, const std::array<const route*, kClasses>& by_class,
                                 const route& fallback)
    : selector_route(std::move(name), targets_of(by_class, fallback), false) {
  std::size_t next = 1;
  for (std::size_t c = 0; c < kClasses; ++c) target_of_[c] = by_class[c] != nullptr ? next++ : 0;
  target_of_[kClasses] = 0;
}

std::size_t operation_route::pick(const protocol::request& req, std::string_view) const {
  return target_of_[static_cast<std::size_t>(protocol::operation_of(req))];
}

}  // namespace ithaca::route

// ---- the kind: options, how the config formats spell them, build.

namespace ithaca::route {

namespace {

struct operation_options final : config::route_options {};

// mcrouter's operation names (carbon's request names) -> ithaca's classes.
bool op_class_of(const std::string& op, config::op_class& out) {
  static const std::map<std::string, config::op_class> ops = {
      {"get", config::op_class::Get},         {"gets", config::op_class::Get},
      {"lease-get", config::op_class::Get},   {"metaget", config::op_class::Get},
      {"set", config::op_class::Set},         {"add", config::op_class::Set},
      {"replace", config::op_class::Set},     {"append", config::op_class::Set},
      {"prepend", config::op_class::Set},     {"cas", config::op_class::Set},
      {"lease-set", config::op_class::Set},   {"delete", config::op_class::Delete},
      {"incr", config::op_class::Arithmetic}, {"decr", config::op_class::Arithmetic},
      {"touch", config::op_class::Touch},     {"gat", config::op_class::Touch},
      {"gats", config::op_class::Touch},
  };
  auto it = ops.find(op);
  if (it == ops.end()) return false;
  out = it->second;
  return true;
}

// mcrouter's operation_policies: {OPERATION: ROUTE}. ithaca selects by class:
// every operation mcrouter names maps onto one, and two operations of a
// class must share a route.
void read_policies(config::route_kind_reader& in, const char* key, config::route_config& r, config::route_options&) {
  const YAML::Node& ops = *in.value(key);
  if (!ops.IsMap()) {
    in.fail_node(ops, "OperationSelectorRoute: operation_policies is not an object");
    return;
  }
  std::map<config::op_class, std::pair<std::string, std::string>> by_class;  // op, route as text
  for (const auto kv : ops) {
    const std::string op = kv.first.Scalar();
    config::op_class cls{};
    if (!op_class_of(op, cls)) {
      in.fail_node(kv.first,
                   "OperationSelectorRoute: operation '" + op +
                       "' cannot be selected by ithaca (get, gets, "
                       "lease-get, metaget, set, add, replace, append, prepend, cas, lease-set, delete, incr, "
                       "decr, touch, gat, gats)");
      continue;
    }
    const std::string text = YAML::Dump(kv.second);
    if (auto it = by_class.find(cls); it != by_class.end()) {
      if (it->second.second != text) {
        in.fail_node(kv.first, "OperationSelectorRoute: '" + it->second.first + "' and '" + op +
                                   "' are one class for ithaca (" + kinds::to_string(cls) +
                                   ") and must have the same route");
      }
      continue;
    }
    by_class[cls] = {op, text};
    r.children.push_back(in.route_at(kv.second, kinds::to_string(cls), "operation_policies"));
  }
}

// `default`: a key mcrouter's OperationSelectorRoute does not read (its
// route is default_policy); its own test configs write it
// (test_same_pool_failover.json), and mcrouter ignores keys it does not
// read. Accepted, unread: its value is not a route here either.
void read_ignored(config::route_kind_reader&, const char*, config::route_config&, config::route_options&) {}

constexpr config::child_slot kOperationSlots[] = {
    {"get", "get", nullptr, false, 0},       {"set", "set", nullptr, false, 0},
    {"delete", "delete", nullptr, false, 0}, {"arithmetic", "arithmetic", nullptr, false, 0},
    {"touch", "touch", nullptr, false, 0},   {"default", "default", "default_policy", false, 0},
};
constexpr config::option_spec kOperationOptions[] = {
    config::custom_option(nullptr, "operation_policies",
                          "mcrouter: a route by operation name (get, set, delete, incr, ...), each class's once",
                          read_policies, config::show_nothing, nullptr, "{\"get\": \"PoolRoute|main\"}"),
    config::custom_option(nullptr, "default", "mcrouter does not read it (its route is default_policy): ignored",
                          read_ignored, config::show_nothing, nullptr, "\"PoolRoute|main\""),
};

std::string backquoted(const std::vector<std::string>& keys) {
  std::string out;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i != 0) out += i + 1 == keys.size() ? " and " : ", ";
    out += "`" + keys[i] + ":`";
  }
  return out;
}

// YAML: `default:` or a route for every class. mcrouter: default_policy
// alone is that route; without it, a class no policy names gets an error
// (as mcrouter answers).
void finish_operation(config::route_kind_reader& in, config::route_config& r) {
  const bool has_default = !r.with_role("default").empty();
  std::vector<std::string> missing;
  for (std::size_t i = 0; i < config::kOpClasses; ++i) {
    const char* cls = kinds::to_string(kinds::op_class_at(i));
    if (r.with_role(cls).empty()) missing.emplace_back(cls);
  }
  if (in.format() == config::route_format::Yaml) {
    if (!missing.empty() && !has_default) {
      in.fail(
          "an operation route needs `default:` or a route for every class (get, set, delete, arithmetic, "
          "touch); none for " +
          backquoted(missing));
    }
    return;
  }
  if (!in.value("operation_policies")) {
    if (!has_default) {
      in.fail("OperationSelectorRoute needs either 'default_policy' or 'operation_policies'");
      return;
    }
    config::become_only_child(r);
    return;
  }
  if (has_default) return;
  for (const std::string& cls : missing) {
    config::route_config e = config::module_node("error", config::route_format::Mcrouter, r.line,
                                                 {{"message", "no route for this operation"}});
    e.role = cls;
    r.children.push_back(std::move(e));
  }
}

const route* build_operation(tree_builder& b, const config::route_config& r) {
  std::array<const route*, operation_route::kClasses> by_class{};
  for (std::size_t c = 0; c < operation_route::kClasses; ++c) {
    const char* cls = kinds::to_string(kinds::op_class_at(c));
    if (r.with_role(cls).empty()) continue;
    if ((by_class[c] = b.child(r, cls, false)) == nullptr) return nullptr;
  }
  const route* fallback = nullptr;
  if (r.with_role("default").empty()) {
    config::route_config none = config::module_node("null", config::route_format::Yaml, r.line);
    none.name = "null";
    fallback = b.build(none);
  } else {
    fallback = b.child(r, "default", false);
  }
  if (fallback == nullptr) return nullptr;
  return b.add<operation_route>(b.name_of(r), by_class, *fallback);
}

constexpr config::route_kind_info kOperationInfo{
    "operation",
    "OperationSelectorRoute",
    "a child per operation class, with a default",
    kOperationSlots,
    kOperationOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> {
      return std::make_shared<operation_options>();
    },
    config::route_kind_info::collapse::ScalarIsChild,
    finish_operation,
};

}  // namespace

extern constinit const kind_module kOperationKind{kOperationInfo, build_operation};

}  // namespace ithaca::route
