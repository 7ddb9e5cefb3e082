// Builds the route tree from the configuration: the pools (servers found
// again in the directory, so a reload keeps them) and the route nodes. With
// no `route:` the tree is the local store alone (the cache role), served as
// the node's replication role allows (`store_access`).
// [pooler, or main at start-up; store_tree: also the role monitor]
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config.h"
#include "route_tree.h"
#include "server_directory.h"

namespace ithaca::route {

// How clients reach the local store, by replication role: a master or a
// plain cache reads and writes; a slave serves reads (serve_reads: true) or
// closes its clients (yrmcds's way). A role that follows a virtual IP
// changes it at run time (server/served_role.h).
enum class store_access : std::uint8_t { ReadWrite, ReadOnly, Closed };
store_access slave_access(bool serve_reads);
const char* to_string(store_access a);

// The tree of a config without `route:`: the local store behind the gate
// `access` asks for (none, read_only, closed); `pools` are the config's pools
// (for stats and the server list; no route sends to them). A writable store
// with ack_timeout_ms > 0 (`replication.ack: slave`) is behind the ack gate.
std::shared_ptr<const route_tree> store_tree(store_access access,
                                             std::vector<std::shared_ptr<const proxy::pool>> pools = {},
                                             uint64_t ack_timeout_ms = 0);
// replication.ack_timeout when `ack: slave`, else 0.
uint64_t ack_timeout_of(const config::config& cfg);

std::shared_ptr<const route_tree> build_route_tree(const config::config& cfg, proxy::server_directory& dir,
                                                   store_access access, std::string* error);

}  // namespace ithaca::route
