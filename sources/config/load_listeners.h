// ithaca YAML's `listeners:` section: listeners that each serve a route tree
// of their own (router_config.h, listener_route). Internal to the config
// library (load.cc calls it once `pools:` is read).
#pragma once

#include <yaml-cpp/yaml.h>

#include "config.h"
#include "yaml_section.h"

namespace ithaca::config {

// `listeners:` is a list of mappings:
//   - listen: 127.0.0.1:22122    # "host:port", "[v6]:port" or "unix:/path"
//     route: {type: pool, pool: main}   # a route, as under `route:`
//     backlog: 512                # optional: listen(2) backlog (listen.backlog)
//     max_connections: 100        # optional: open clients at most (0: none of its own)
// Each route is read by load_router's parse_route and checked against the
// pools already in `out` (check_router), so a listener's tree takes every
// route kind `route:` takes, with the same errors.
void parse_listeners(const YAML::Node& node, load_context& ctx, router_config& out);

// One listen address: "unix:/path" kept as is, a TCP one normalised
// ("host" -> "host:11211", "[::1]:5" -> "[::1]:5"). False and *error.
bool parse_listener_address(std::string_view text, std::string& out, std::string* error);

}  // namespace ithaca::config
