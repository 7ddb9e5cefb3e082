#include "route_builder.h"

#include <map>

#include "local_route.h"
#include "routes/ack_route.h"
#include "routes/closed_route.h"
#include "routes/pool_route.h"
#include "routes/read_only_route.h"

namespace ithaca::route {

namespace {

struct builder {
  const config::config& cfg;
  std::map<std::string, std::shared_ptr<const proxy::pool>> pools;
  std::vector<std::unique_ptr<const route>> routes;
  std::string error;

  // The local store; on a master with `ack: slave`, behind the ack gate.
  const route* local() {
    routes.push_back(std::make_unique<local_route>());
    const route* r = routes.back().get();
    if (const uint64_t ack_ms = ack_timeout_of(cfg); ack_ms > 0) {
      routes.push_back(std::make_unique<ack_route>(*r, ack_ms));
      r = routes.back().get();
    }
    return r;
  }

  const route* node(const config::route_config& r) {
    switch (r.kind) {
      case config::route_kind::Local:
        return local();
      case config::route_kind::Pool: {
        auto it = pools.find(r.pool);
        if (it == pools.end()) {
          error = "route names pool '" + r.pool + "', which is not under `pools:`";
          return nullptr;
        }
        routes.push_back(std::make_unique<pool_route>(r.name.empty() ? "pool:" + r.pool : r.name, it->second));
        return routes.back().get();
      }
    }
    return nullptr;
  }
};

}  // namespace

uint64_t ack_timeout_of(const config::config& cfg) {
  return cfg.replication.ack == config::replication_ack::Slave ? cfg.replication.ack_timeout_ms : 0;
}

store_access slave_access(bool serve_reads) { return serve_reads ? store_access::ReadOnly : store_access::Closed; }

const char* to_string(store_access a) {
  switch (a) {
    case store_access::ReadOnly: return "read-only";
    case store_access::Closed: return "closed";
    case store_access::ReadWrite: break;
  }
  return "read-write";
}

namespace {
// The local store behind the gate `access` asks for, appended to `routes`;
// returns the root of it.
const route* store_root(store_access access, uint64_t ack_timeout_ms,
                        std::vector<std::unique_ptr<const route>>& routes) {
  switch (access) {
    case store_access::ReadWrite:
      routes.push_back(std::make_unique<local_route>());
      if (ack_timeout_ms > 0) routes.push_back(std::make_unique<ack_route>(*routes.back(), ack_timeout_ms));
      break;
    case store_access::ReadOnly:
      routes.push_back(std::make_unique<local_route>());
      routes.push_back(std::make_unique<read_only_route>(*routes.back()));
      break;
    case store_access::Closed:
      routes.push_back(std::make_unique<closed_route>());
      break;
  }
  return routes.back().get();
}
}  // namespace

std::shared_ptr<const route_tree> store_tree(store_access access,
                                             std::vector<std::shared_ptr<const proxy::pool>> pools,
                                             uint64_t ack_timeout_ms) {
  std::vector<std::unique_ptr<const route>> routes;
  const route* root = store_root(access, ack_timeout_ms, routes);
  return std::make_shared<const route_tree>(std::move(routes), root, std::move(pools));
}

std::shared_ptr<const route_tree> build_route_tree(const config::config& cfg, proxy::server_directory& dir,
                                                   store_access access, std::string* error) {
  builder b{cfg, {}, {}, {}};
  std::vector<std::shared_ptr<const proxy::pool>> pools;
  // Every pool is built (connections open only when a route sends to one).
  for (const config::pool_config& p : cfg.router.pools) {
    std::string why;
    auto built = proxy::pool::build(p, dir, &why);
    if (!built) {
      if (error) *error = why;
      return nullptr;
    }
    b.pools[p.name] = built;
    pools.push_back(built);
  }
  // The default root: with no `route:`, the local store as the role allows
  // (pools without a route serve nothing).
  const route* root = cfg.router.has_route ? b.node(cfg.router.route)
                                           : store_root(access, ack_timeout_of(cfg), b.routes);
  if (!root) {
    if (error) *error = b.error;
    return nullptr;
  }
  // One root per listener with a tree of its own (route_tree.h), in order.
  std::vector<const route*> listener_roots;
  for (const config::listener_route& l : cfg.router.listeners) {
    const route* r = b.node(l.route);
    if (!r) {
      if (error) *error = "listener " + l.address + ": " + b.error;
      return nullptr;
    }
    listener_roots.push_back(r);
  }
  return std::make_shared<const route_tree>(std::move(b.routes), root, std::move(pools), std::move(listener_roots));
}

}  // namespace ithaca::route
