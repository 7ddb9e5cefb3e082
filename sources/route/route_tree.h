// The route tree: built from the configuration, immutable, shared by every
// worker through the live-settings snapshot (server/live_settings.h). A
// reload builds a new tree and publishes it; a batch keeps the tree it
// started with until its last request is answered.
#pragma once

#include <memory>
#include <vector>

#include "pool.h"
#include "route.h"
#include "server_route.h"

namespace ithaca::route {

class route_tree {
 public:
  // The cache role: one `local` route over the store.
  static std::shared_ptr<const route_tree> local_only();

  // Takes ownership of every route of the tree; `root` is one of them.
  // `pools`: every pool of the config (for stats and the server list).
  route_tree(std::vector<std::unique_ptr<const route>> routes, const route* root,
             std::vector<std::shared_ptr<const proxy::pool>> pools = {});

  const std::vector<std::shared_ptr<const proxy::pool>>& pools() const { return pools_; }
  // Every server of every pool (a reload retires the servers not in here).
  std::vector<std::shared_ptr<proxy::backend_server>> servers() const;

  const route& root() const { return *root_; }
  // Every node of the tree, in the order it was built (stats routes).
  std::vector<const route*> nodes() const;
  // Where the commands the server answers itself go (server_route.h).
  const route& server() const { return server_; }
  // The whole tree is the local store: every request runs on it (at once,
  // but for writes that wait for a slave's confirmation: ack_route).
  bool root_is_local() const { return root_is_local_; }
  // A request may wait before its reply: the tree reaches servers, or its
  // writes wait for a slave (ack_route). Not for a plain local store.
  bool root_may_wait() const { return root_may_wait_; }

 private:
  static bool is_local(const route* r);
  std::vector<std::unique_ptr<const route>> routes_;
  server_route server_;
  const route* root_;
  std::vector<std::shared_ptr<const proxy::pool>> pools_;
  bool root_is_local_;
  bool root_may_wait_;
};

}  // namespace ithaca::route
