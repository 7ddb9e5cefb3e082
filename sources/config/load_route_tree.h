// ithaca's YAML spelling of one route node and its subtree (README
// "Routes"): a mapping with `type:` and the kind's children and options, or
// a shorthand string: "local", "pool:NAME", or the name of a route under
// `routes:`. Every mistake is recorded in the context as file:line: message.
// Internal to the config library (load_router.cc is its user).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "router_config.h"
#include "yaml_section.h"

namespace ithaca::config {

// Reads `node` into a route_config whose role in its parent is `role`.
route_config read_route_node(const YAML::Node& node, load_context& ctx, std::string role = "");

}  // namespace ithaca::config
