// The loader's `pools:` and `route:` sections (load.cc calls these). Internal
// to the config library.
#pragma once

#include <yaml-cpp/yaml.h>

#include "config.h"
#include "yaml_section.h"

namespace ithaca::config {

// `pools:` is a mapping of pool name -> pool settings.
void parse_pools(const YAML::Node& node, load_context& ctx, router_config& out);
// `route:` is one route node (a mapping with `type:`), children nested.
void parse_route(const YAML::Node& node, load_context& ctx, router_config& out);
// Cross-checks once both are read: every `pool:` a route names exists.
void check_router(const YAML::Node& route_node, load_context& ctx, const router_config& rc);

}  // namespace ithaca::config
