#include "route_builder.h"

#include <map>

#include "local_route.h"
#include "route_kind.h"
#include "routes/ack_route.h"
#include "routes/closed_route.h"
#include "routes/read_only_route.h"

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
    const auto found = r.with_role(role);
    if (found.size() != 1) return fail(r, "needs exactly one `" + std::string(role) + "` route");
    return result ? result_child(r, *found.front()) : node(*found.front());
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

  const route* build(const config::route_config& n) override { return node(n); }

  // The local store; on a master with `ack: slave`, behind the ack gate.
  const route* local_store() override {
    const route* r = add<local_route>();
    if (const uint64_t ack_ms = ack_timeout_of(cfg); ack_ms > 0) r = add<ack_route>(*r, ack_ms);
    return r;
  }

  std::shared_ptr<const proxy::pool> pool(const std::string& name) override {
    auto it = pools.find(name);
    return it == pools.end() ? nullptr : it->second;
  }

  std::vector<std::shared_ptr<const proxy::pool>> all_pools() override {
    std::vector<std::shared_ptr<const proxy::pool>> out;
    for (const auto& [name, p] : pools) out.push_back(p);
    return out;
  }

  std::string default_route() override { return cfg.router.default_route; }
  bool send_invalid_route_to_default() override { return cfg.router.send_invalid_route_to_default; }

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

  // The runtime route of one config node: a reference to a named route
  // (built once and shared), or a kind by its module's build function
  // (route_kind.h). Every node is owned by the tree being built; a failure
  // records the node's line and returns null. [the thread building the tree:
  // main at start-up, the pooler at a reload, under served_role's publish
  // mutex, which orders it before the server directory's lock that pools
  // take] Recursion is as deep as the config's tree.
  const route* node(const config::route_config& r) {
    if (r.is_ref()) return ref(r);
    const kind_module* k = find_route_kind(r.module->name);
    if (k == nullptr) return fail(r, "has no module (route_kinds.cc)");
    return k->build(*this, r);
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
    case store_access::Closed: routes.push_back(std::make_unique<closed_route>()); break;
  }
  return routes.back().get();
}
}  // namespace

std::shared_ptr<const route_tree> store_tree(store_access access, std::vector<std::shared_ptr<const proxy::pool>> pools,
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
  const route* root =
      cfg.router.has_route ? b.node(cfg.router.route) : store_root(access, ack_timeout_of(cfg), b.routes);
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
