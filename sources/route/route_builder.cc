#include "route_builder.h"

#include <map>

#include "local_route.h"
#include "routes/ack_route.h"
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
    const config::replication_config& repl = cfg.replication;
    if (repl.role == config::replication_role::Master && repl.ack == config::replication_ack::Slave) {
      routes.push_back(std::make_unique<ack_route>(*r, repl.ack_timeout_ms));
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

std::shared_ptr<const route_tree> build_route_tree(const config::config& cfg, proxy::server_directory& dir,
                                                   std::string* error) {
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
  if (!cfg.router.has_route) {
    // The local store; on a replication slave that serves reads (one that
    // does not closes its clients) behind a read-only gate.
    const route* root = b.local();
    if (cfg.replication.role == config::replication_role::Slave) {
      b.routes.push_back(std::make_unique<read_only_route>(*root));
      root = b.routes.back().get();
    }
    return std::make_shared<const route_tree>(std::move(b.routes), root, std::move(pools));
  }
  const route* root = b.node(cfg.router.route);
  if (!root) {
    if (error) *error = b.error;
    return nullptr;
  }
  return std::make_shared<const route_tree>(std::move(b.routes), root, std::move(pools));
}

}  // namespace ithaca::route
