#include "route_builder.h"

#include <map>

#include <array>

#include "distribution/distribution.h"
#include "local_route.h"
#include "route_kind.h"
#include "routes/ack_route.h"
#include "routes/closed_route.h"
#include "routes/failover_route.h"
#include "routes/hash_route.h"
#include "routes/operation_route.h"
#include "routes/pool_route.h"
#include "routes/prefix_route.h"
#include "routes/rate_limit_route.h"
#include "routes/read_only_route.h"
#include "routes/route_util.h"
#include "routes/shadow_route.h"

namespace ithaca::route {

namespace {

struct builder final : tree_builder {
  explicit builder(const config::config& c) : cfg(c) {}

  const config::config& cfg;
  std::map<std::string, std::shared_ptr<const proxy::pool>> pools;
  std::vector<std::unique_ptr<const route>> routes;
  std::string error;
  std::map<std::string, const route*> named;  // named routes built so far
  std::vector<std::string> building;          // named routes being built (cycles)

  const route* keep(std::unique_ptr<const route> made) override {
    routes.push_back(std::move(made));
    return routes.back().get();
  }

  const route* fail(const config::route_config& r, std::string why) override {
    if (error.empty()) {
      error = (r.line > 0 ? "line " + std::to_string(r.line) + ": " : std::string()) + config::kind_name(r) +
              " route: " + why;
    }
    return nullptr;
  }

  const route* child(const config::route_config& r, std::string_view role, bool result) override {
    return one(r, role, result);
  }

  bool children(const config::route_config& r, std::string_view role, bool result, std::size_t min,
                std::vector<const route*>& out) override {
    for (const config::route_config* c : r.with_role(role)) {
      const route* built = result ? result_child(r, *c) : node(*c);
      if (built == nullptr) return false;
      out.push_back(built);
    }
    if (out.size() < min) {
      fail(r, "needs at least " + std::to_string(min) + " child route" + (min == 1 ? "" : "s"));
      return false;
    }
    return true;
  }

  // The local store; on a master with `ack: slave`, behind the ack gate.
  const route* local() {
    const route* r = add<local_route>();
    if (const uint64_t ack_ms = ack_timeout_of(cfg); ack_ms > 0) r = add<ack_route>(*r, ack_ms);
    return r;
  }

  std::string name_of(const config::route_config& r, const std::string& fallback) {
    return r.name.empty() ? fallback : r.name;
  }

  // A child whose answer its parent looks at: not the local store's, which
  // renders its reply itself.
  const route* result_child(const config::route_config& parent, const config::route_config& c) {
    const route* r = node(c);
    if (r != nullptr && !r->answers_in_result()) {
      return fail(parent, std::string("its child '") + r->name() +
                              "' answers straight to the client (the local store): it can be a tree's root or a "
                              "prefix/operation choice, not a child whose reply a composite route looks at");
    }
    return r;
  }

  bool list(const config::route_config& r, std::vector<const route*>& out, std::size_t min) {
    return children(r, "", true, min, out);
  }

  const route* one(const config::route_config& r, std::string_view role, bool result) {
    const auto found = r.with_role(role);
    if (found.size() != 1) return fail(r, "needs exactly one `" + std::string(role) + "` route");
    return result ? result_child(r, *found.front()) : node(*found.front());
  }

  // The runtime route of one config node, built once (a named route through
  // `ref` is shared; a cycle was refused by route_check): a registered kind
  // by its module's build function (route_kind.h), the others by a case
  // here (until each has a module of its own). Every node
  // is owned by the tree being built; a failure records the node's line and
  // returns null. [the thread building the tree: main at start-up, the pooler at
  // a reload, under served_role's publish mutex, which orders it before the
  // server directory's lock that pools take] Recursion is as deep as the
  // config's tree.
  const route* node(const config::route_config& r) {
    using config::route_kind;
    switch (r.kind) {
      case route_kind::Local:
        return local();
      case route_kind::Pool: {
        auto it = pools.find(r.pool);
        if (it == pools.end()) return fail(r, "names pool '" + r.pool + "', which is not under `pools:`");
        return add<pool_route>(name_of(r, "pool:" + r.pool), it->second, r.reliable_deletes);
      }
      case route_kind::Ref:
        return ref(r);
      case route_kind::Prefix: {
        std::vector<std::pair<std::string, const route*>> by_prefix;
        for (const config::route_config* c : r.with_role("prefix")) {
          const route* built = node(*c);
          if (built == nullptr) return nullptr;
          by_prefix.emplace_back(c->match, built);
        }
        const route* fallback = r.with_role("default").empty()
                                    ? implicit(r, "error", "no_prefix", "no route for this key (no prefix matches)")
                                    : one(r, "default", false);
        if (fallback == nullptr) return nullptr;
        return add<prefix_route>(name_of(r, "prefix"), std::move(by_prefix), *fallback);
      }
      case route_kind::Operation: {
        std::array<const route*, operation_route::kClasses> by_class{};
        for (std::size_t c = 0; c < operation_route::kClasses; ++c) {
          const auto found = r.with_role(config::to_string(static_cast<config::op_class>(c)));
          if (found.empty()) continue;
          by_class[c] = node(*found.front());
          if (by_class[c] == nullptr) return nullptr;
        }
        const route* fallback = r.with_role("default").empty() ? implicit(r, "null", "null") : one(r, "default", false);
        if (fallback == nullptr) return nullptr;
        return add<operation_route>(name_of(r, "operation"), by_class, *fallback);
      }
      case route_kind::Failover:
      case route_kind::FailoverExptime: {
        failover_route::options o;
        std::string bad;
        failover_mask all = kFailoverAll;
        if (!parse_failover_errors(r.failover_errors, all, &bad)) return fail(r, "unknown failover error '" + bad + "'");
        o.errors.fill(all);
        for (std::size_t c = 0; c < config::kOpClasses; ++c) {
          if (r.failover_errors_by_class[c].empty()) continue;
          if (!parse_failover_errors(r.failover_errors_by_class[c], o.errors[c], &bad)) {
            return fail(r, "unknown failover error '" + bad + "'");
          }
        }
        o.limit_rate = r.failover_rate;
        o.limit_burst = r.failover_burst > 0 ? r.failover_burst : 1000;
        std::vector<const route*> children;
        if (r.kind == route_kind::FailoverExptime) {
          o.gutter = true;
          o.exptime = r.exptime == 0 ? 10 : r.exptime;
          const route* normal = one(r, "normal", true);
          if (normal == nullptr) return nullptr;
          children.push_back(normal);
          for (const config::route_config* c : r.with_role("failover")) {
            const route* built = result_child(r, *c);
            if (built == nullptr) return nullptr;
            children.push_back(built);
          }
          if (children.size() < 2) return fail(r, "needs at least one `failover` route");
        } else if (!list(r, children, 1)) {
          return nullptr;
        }
        return add<failover_route>(name_of(r, config::to_string(r.kind)), std::move(children), o);
      }
      case route_kind::Shadow: {
        const route* normal = one(r, "normal", false);
        if (normal == nullptr) return nullptr;
        std::vector<shadow_target> shadows;
        for (const config::route_config* c : r.with_role("shadow")) {
          const route* built = result_child(r, *c);
          if (built == nullptr) return nullptr;
          shadows.push_back(shadow_target{built, c->key_fraction_lo, c->key_fraction_hi, c->request_fraction});
        }
        if (shadows.empty()) return fail(r, "needs at least one `shadow` route");
        return add<shadow_route>(name_of(r, "shadow"), *normal, std::move(shadows));
      }
      case route_kind::Hash: {
        std::vector<const route*> children;
        for (const config::route_config* c : r.with_role("")) {
          const route* built = node(*c);
          if (built == nullptr) return nullptr;
          children.push_back(built);
        }
        if (children.empty()) return fail(r, "needs at least one child route");
        std::vector<proxy::server_spec> specs;
        for (std::size_t i = 0; i < children.size(); ++i) specs.push_back(proxy::server_spec{"child:" + std::to_string(i), 1});
        std::string why;
        auto dist = proxy::make_distribution(r.dist, specs, r.hash, &why);
        if (!dist) return fail(r, why);
        return add<hash_route>(name_of(r, "hash"), std::move(children), std::move(dist));
      }
      case route_kind::RateLimit: {
        const route* child = one(r, "target", false);
        if (child == nullptr) return nullptr;
        const route* fallback = nullptr;
        if (!r.with_role("fallback").empty()) {
          fallback = one(r, "fallback", false);
          if (fallback == nullptr) return nullptr;
        }
        std::array<double, rate_limit_route::kClasses> rate{}, burst{};
        for (std::size_t c = 0; c < rate.size(); ++c) {
          rate[c] = r.rate[c];
          burst[c] = r.burst[c] > 0 ? r.burst[c] : r.rate[c];
        }
        return add<rate_limit_route>(name_of(r, "rate_limit"), *child, fallback, rate, burst);
      }
      case route_kind::Module: {
        const kind_module* k = r.module != nullptr ? find_route_kind(r.module->name) : nullptr;
        if (k == nullptr) return fail(r, "has no module (route_kinds.cc)");
        return k->build(*this, r);
      }
    }
    return fail(r, "unknown kind");
  }

  // A node the config does not write: a selector's fallback (a registered
  // kind, named `name`, with its `message` when it takes one).
  const route* implicit(const config::route_config& parent, std::string_view kind, const char* name,
                        std::string message = {}) {
    config::route_config n = message.empty()
                                 ? config::module_node(kind, config::route_format::Yaml, parent.line)
                                 : config::module_node(kind, config::route_format::Yaml, parent.line,
                                                       {{"message", std::move(message)}});
    n.name = name;
    return node(n);
  }

  // A named route under `routes:`, built once and shared wherever it is used.
  const route* ref(const config::route_config& r) {
    if (auto it = named.find(r.name); it != named.end()) return it->second;
    for (const std::string& b : building) {
      if (b == r.name) return fail(r, "named route '" + r.name + "' uses itself");
    }
    const config::route_config* def = nullptr;
    for (const config::route_config& n : cfg.router.named_routes) {
      if (n.name == r.name) def = &n;
    }
    if (def == nullptr) return fail(r, "names route '" + r.name + "', which is not under `routes:`");
    building.push_back(r.name);
    const route* built = node(*def);
    building.pop_back();
    if (built != nullptr) named[r.name] = built;
    return built;
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
  builder b(cfg);
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
