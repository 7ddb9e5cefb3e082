// The route an mcrouter config's `route` wrote: the reader serves it under
// a routing_prefix root of one route (mcrouter's RootRoute, the default
// routing prefix alone), and these tests look at the route itself.
#pragma once

#include <string>

#include "load.h"
#include "route_kind_info.h"

inline const ithaca::config::route_config& written_route(const ithaca::config::config& c) {
  const ithaca::config::route_config& r = c.router.route;
  if (c.router.format == "mcrouter" && std::string(ithaca::config::kind_name(r)) == "routing_prefix" &&
      r.children.size() == 1) {
    return r.children.front();
  }
  return r;
}
