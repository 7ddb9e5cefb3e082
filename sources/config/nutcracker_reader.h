// A twemproxy (nutcracker) nutcracker.yml, read as it is: a top-level mapping
// of pool names, each with `listen:` and `servers:`. Every pool becomes a pool
// (router_config.h) and a listener on its `listen:` address whose tree is that
// pool's route (listener_route); `listen:` and `route:` of ithaca's own are
// empty (no other listener, unless -l or -p on the command line adds one,
// which then serves the local store).
//
// Keys and defaults are twemproxy 0.5.0's (README, "Configuration"):
//   listen               "host:port", "name:port" or "/path [mode]" (required)
//   servers              "host:port:weight [name]", "/path:weight [name]" (required)
//   hash                 twemproxy's names; fnv1a_64 when omitted
//   hash_tag             two characters, e.g. "{}"
//   distribution         ketama (default), modula, random
//   timeout              ms, connect and reply; omitted: ithaca's 1 s (twemproxy
//                        waits forever, which no wait here does)
//   backlog              512
//   client_connections   0 (no limit of the pool's own)
//   preconnect           false
//   server_connections   1
//   auto_eject_hosts     false
//   server_retry_timeout 30000 ms (a down server is probed again after it,
//                        every time: no back-off, as twemproxy)
//   server_failure_limit 2
//   tcpkeepalive         false (true is refused: not supported)
//   redis, redis_auth, redis_db: refused ("redis pools are not supported")
// An unknown key is refused with FILE:LINE like ithaca's own errors.
#pragma once

#include <yaml-cpp/yaml.h>

#include "config.h"
#include "yaml_section.h"

namespace ithaca::config {

// True if `root` is a nutcracker.yml: a mapping whose keys are none of
// ithaca's section names and whose values include a mapping with both
// `listen:` and `servers:`. [pure]
bool is_nutcracker_document(const YAML::Node& root);

// If `root` is a nutcracker.yml, reads it into `out` (over its defaults;
// errors into `ctx` as FILE:LINE: message) and returns true; else leaves
// both alone and returns false (the caller reads it as ithaca's YAML).
bool read_nutcracker(const YAML::Node& root, load_context& ctx, config& out);

}  // namespace ithaca::config
