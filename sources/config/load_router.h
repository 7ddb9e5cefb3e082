// The loader's `pools:` and `route:` sections (load.cc calls these). Internal
// to the config library.
#pragma once

#include <yaml-cpp/yaml.h>

#include "config.h"
#include "yaml_section.h"

namespace ithaca::config {

// The keys of a TLS client setting (a pool's `tls:` map, `router.tls:`,
// `replication.tls:`): ca_cert, verify, chain_cert, key, server_name,
// min_version, ciphers. `where` names the section ("pools.a.tls").
void parse_tls_keys(section& s, const std::string& where, backend_tls& t);

// `pools:` is a mapping of pool name -> pool settings.
void parse_pools(const YAML::Node& node, load_context& ctx, router_config& out);
// `routes:` is a mapping of names to routes, each usable by name anywhere.
void parse_named_routes(const YAML::Node& node, load_context& ctx, router_config& out);
// `route:` is one route node (a mapping with `type:`, or a shorthand
// string), children nested (load_route_tree.h).
void parse_route(const YAML::Node& node, load_context& ctx, router_config& out);
// Cross-checks once all are read (route_check.h): every pool a route names
// exists, every ref names a route under `routes:`, no cycle among those.
void check_router(const YAML::Node& root, load_context& ctx, const router_config& rc);

}  // namespace ithaca::config
