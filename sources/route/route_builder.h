// Builds the route tree from the configuration: the pools (servers found
// again in the directory, so a reload keeps them) and the route nodes. With
// no `route:` the tree is the local store alone (the cache role).
// [pooler, or main at start-up]
#pragma once

#include <memory>
#include <string>

#include "config.h"
#include "route_tree.h"
#include "server_directory.h"

namespace ithaca::route {

std::shared_ptr<const route_tree> build_route_tree(const config::config& cfg, proxy::server_directory& dir,
                                                   std::string* error);

}  // namespace ithaca::route
