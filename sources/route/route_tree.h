// The route tree: built from the configuration, immutable, shared by every
// worker through the live-settings snapshot (server/live_settings.h). A
// reload builds a new tree and publishes it; a batch keeps the tree it
// started with until its last request is answered.
//
// One tree holds one root per listener: root 0 serves the `listen:`
// addresses (and UDP); root 1 + i serves router.listeners[i] (a listener
// with a tree of its own: ithaca's `listeners:`, a nutcracker.yml's pools).
// A client learns its root index from the pooler at accept (the listener it
// came in on) and dispatches every request on that root of whichever tree
// its batch runs on. The listeners are the same in every tree the server
// publishes (a reload that adds, removes or reorders one is refused), so an
// index stays valid across reloads.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "pool.h"
#include "route.h"
#include "server_route.h"

namespace ithaca::route {

class route_tree {
 public:
  // The cache role: one `local` route over the store.
  static std::shared_ptr<const route_tree> local_only();

  // Takes ownership of every route of the tree; `root` (the default root) and
  // `listener_roots` (root 1 + i for listener i) are among them.
  // `pools`: every pool of the config (for stats and the server list).
  route_tree(std::vector<std::unique_ptr<const route>> routes, const route* root,
             std::vector<std::shared_ptr<const proxy::pool>> pools = {}, std::vector<const route*> listener_roots = {});

  // A tree with `fresh`'s default root and `previous`'s listener roots (a
  // role change rebuilds the store tree of a file without `route:`; the
  // listeners keep theirs). Both stay alive through the result.
  static std::shared_ptr<const route_tree> rebase(std::shared_ptr<const route_tree> fresh,
                                                  std::shared_ptr<const route_tree> previous);

  const std::vector<std::shared_ptr<const proxy::pool>>& pools() const { return pools_; }
  // Every server of every pool (a reload retires the servers not in here).
  std::vector<std::shared_ptr<proxy::backend_server>> servers() const;

  // How many roots: 1 + the listeners with a tree of their own.
  std::size_t roots() const { return roots_.size(); }
  // Root `i` (0: the default). An index past roots() (cannot happen while
  // reloads keep the listeners) gets the `closed` route: the connection ends
  // at its next request rather than reach a tree it was not accepted for.
  const route& root(std::size_t i = 0) const;
  // Every node of the tree, in the order it was built (stats routes). A
  // rebased tree's: the fresh store tree's, then those of the listeners'
  // tree that a listener root reaches (not its old default root's).
  std::vector<const route*> nodes() const;
  // The first root, in order, whose walk through children() reaches each
  // node (stats routes' `listener`; a named route two roots share is the
  // first's). Cost: one visit per node and edge. [any thread; pure]
  std::unordered_map<const route*, std::size_t> first_roots() const;
  // Where the commands the server answers itself go (server_route.h).
  const route& server() const { return server_; }
  // The whole tree is the local store: every request runs on it (at once,
  // but for writes that wait for a slave's confirmation: ack_route).
  bool root_is_local(std::size_t i = 0) const { return i < roots_.size() && roots_[i].is_local; }
  // A request may wait before its reply: the tree reaches servers, or its
  // writes wait for a slave (ack_route). Not for a plain local store.
  bool root_may_wait(std::size_t i = 0) const { return i < roots_.size() && roots_[i].may_wait; }
  // Some request may reach the local store from this root (a `local` route,
  // an l1l2's L1): its values are the store's, at most cache.item_size_max;
  // else they only pass through to servers (router.max_value_size).
  bool root_reaches_store(std::size_t i = 0) const { return i < roots_.size() && roots_[i].reaches_store; }

 private:
  struct root_entry {
    const route* root;
    bool is_local;
    bool may_wait;
    bool reaches_store;
  };
  static bool reaches_store(const route* r);
  route_tree() = default;
  static bool is_local(const route* r);
  static root_entry entry_of(const route* r);
  std::vector<std::unique_ptr<const route>> routes_;
  server_route server_;
  std::vector<root_entry> roots_;
  std::vector<std::shared_ptr<const proxy::pool>> pools_;
  // rebase(): the trees that own the routes roots_ points at (none otherwise).
  // `listener_owner_` is the tree that built the listener roots, never a
  // rebased one, so a run of role changes keeps two trees alive, not a chain.
  std::shared_ptr<const route_tree> default_owner_;
  std::shared_ptr<const route_tree> listener_owner_;
};

}  // namespace ithaca::route
