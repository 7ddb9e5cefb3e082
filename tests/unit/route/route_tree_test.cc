// The route tree's roots: one per listener with a tree of its own
// (route_tree.h), kept across a role change's rebuilt store tree.
#include <doctest/doctest.h>

#include "local_route.h"
#include "route_builder.h"
#include "route_kind_info.h"
#include "route_tree.h"
#include "routes/closed_route.h"
#include "routes/read_only_route.h"
#include "server_directory.h"

using namespace ithaca;
using ithaca::route::build_route_tree;
using ithaca::route::closed_route;
using ithaca::route::local_route;
using ithaca::route::read_only_route;
using ithaca::route::route_tree;
using ithaca::route::store_access;
using ithaca::route::store_tree;
using route_node = ithaca::route::route;
using route_list = std::vector<std::unique_ptr<const route_node>>;

namespace {

// A tree whose default root is the local store and whose listener roots are
// a local store and a closed route.
std::shared_ptr<const route_tree> two_listener_tree() {
  route_list routes;
  routes.push_back(std::make_unique<local_route>());
  const route_node* root = routes.back().get();
  routes.push_back(std::make_unique<local_route>());
  const route_node* first = routes.back().get();
  routes.push_back(std::make_unique<closed_route>());
  const route_node* second = routes.back().get();
  return std::make_shared<const route_tree>(std::move(routes), root, std::vector<std::shared_ptr<const proxy::pool>>{},
                                            std::vector<const route_node*>{first, second});
}

}  // namespace

TEST_CASE("one root per listener; an index past them gets the closed route") {
  route_list routes;
  routes.push_back(std::make_unique<local_route>());
  const route_node* root = routes.back().get();
  routes.push_back(std::make_unique<local_route>());
  const route_node* listener = routes.back().get();
  route_tree t(std::move(routes), root, {}, {listener});
  CHECK(t.roots() == 2);
  CHECK(&t.root() == root);
  CHECK(&t.root(0) == root);
  CHECK(&t.root(1) == listener);
  CHECK(t.root_is_local(1));
  CHECK_FALSE(t.root_may_wait(1));
  CHECK(t.root(2).name() == "closed");
  CHECK_FALSE(t.root_is_local(2));
}

TEST_CASE("a config's listeners each get their root, in order") {
  config::config cfg;
  config::listener_route a;
  a.address = "127.0.0.1:1";
  a.route = config::module_node("local", config::route_format::Yaml, 0);
  cfg.router.listeners.push_back(a);
  config::pool_config p;
  p.name = "p";
  config::backend_server server;
  server.address = "127.0.0.1:2";
  p.servers.push_back(server);
  cfg.router.pools.push_back(p);
  config::listener_route b;
  b.address = "127.0.0.1:3";
  b.route = config::module_node("pool", config::route_format::Yaml, 0, {{"pool", p.name}});
  cfg.router.listeners.push_back(b);
  proxy::server_directory dir(1);
  std::string error;
  // A slave that does not serve reads: the default root is the closed store;
  // the listeners keep the trees the file gives them.
  auto t = build_route_tree(cfg, dir, store_access::Closed, &error);
  REQUIRE_MESSAGE(t, error);
  REQUIRE(t->roots() == 3);
  CHECK(t->root(0).name() == "closed");
  CHECK(t->root_is_local(1));
  CHECK(t->root(2).name() == "pool:p");
  CHECK(t->root_may_wait(2));

  // A listener naming a pool that is not there: the error says which listener.
  cfg.router.listeners[1].route = config::module_node("pool", config::route_format::Yaml, 0, {{"pool", "q"}});
  CHECK_FALSE(build_route_tree(cfg, dir, store_access::ReadWrite, &error));
  CHECK(error == "listener 127.0.0.1:3: pool route: names pool 'q', which is not under `pools:`");
}

TEST_CASE("rebase: a role change's store tree keeps the listeners' roots, and no chain of old trees") {
  auto first = two_listener_tree();
  const route_node* listener0 = &first->root(1);
  const route_node* listener1 = &first->root(2);
  std::weak_ptr<const route_tree> first_alive = first;

  auto second = route_tree::rebase(store_tree(store_access::ReadOnly), first);
  first.reset();
  REQUIRE(second->roots() == 3);
  CHECK(second->root(0).name() == "read_only");
  CHECK_FALSE(second->root_is_local(0));
  CHECK(&second->root(1) == listener0);  // the same route objects, kept alive
  CHECK(&second->root(2) == listener1);
  CHECK(second->root_is_local(1));
  CHECK_FALSE(first_alive.expired());

  std::weak_ptr<const route_tree> second_alive = second;
  auto third = route_tree::rebase(store_tree(store_access::ReadWrite), second);
  second.reset();
  CHECK(second_alive.expired());  // the rebased tree is not kept: only the one that built the listeners
  CHECK_FALSE(first_alive.expired());
  CHECK(third->root_is_local(0));
  CHECK(&third->root(1) == listener0);
  CHECK(third->root(1).name() == "local");
  // Its nodes: the fresh store tree's, then the listeners' (not the first
  // tree's old default root), each with the root that reaches it.
  const auto nodes = third->nodes();
  REQUIRE(nodes.size() == 3);
  CHECK(nodes[0] == &third->root(0));
  CHECK(nodes[1] == listener0);
  CHECK(nodes[2] == listener1);
  const auto roots = third->first_roots();
  CHECK(roots.size() == 3);
  CHECK(roots.at(nodes[0]) == 0);
  CHECK(roots.at(listener0) == 1);
  CHECK(roots.at(listener1) == 2);
  third.reset();
  CHECK(first_alive.expired());
}

TEST_CASE("first_roots: a node two roots reach is the first one's") {
  route_list routes;
  routes.push_back(std::make_unique<local_route>());
  const route_node* shared = routes.back().get();
  routes.push_back(std::make_unique<read_only_route>(*shared));
  const route_node* gate = routes.back().get();
  routes.push_back(std::make_unique<closed_route>());
  const route_node* alone = routes.back().get();
  route_tree t(std::move(routes), gate, {}, {shared, alone});
  const auto roots = t.first_roots();
  CHECK(roots.size() == 3);
  CHECK(roots.at(gate) == 0);
  CHECK(roots.at(shared) == 0);  // also root 1, but root 0's walk reached it first
  CHECK(roots.at(alone) == 2);
  CHECK(t.nodes() == std::vector<const route_node*>{shared, gate, alone});
}
