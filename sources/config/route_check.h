// Checks of a whole route tree that no single node can make, shared by the
// readers (ithaca's YAML, an mcrouter JSON file): every `pool` a route names
// exists, every `ref` names a route under `routes:`, and the named routes
// refer to each other without a cycle. Internal to the config library.
#pragma once

#include <string>
#include <vector>

#include "router_config.h"

namespace ithaca::config {

struct route_problem {
  int line = 0;  // 1-based, where the offending route was written
  std::string message;
};

// Every problem found, in no particular order (the caller keeps the first by
// line). Walks `route`, the named routes and every listener's tree.
std::vector<route_problem> check_route_tree(const router_config& rc);

}  // namespace ithaca::config
