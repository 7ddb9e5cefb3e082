#include "served_role.h"

namespace ithaca::server {

void served_role::change(route::store_access access, live_cell& live) {
  std::lock_guard lock(publish_mutex_);
  access_.store(access, std::memory_order_release);
  live_settings next = *live.load();
  next.close_clients = access == route::store_access::Closed;
  if (next.store_routes) {
    const uint64_t ack_ms = next.ack == config::replication_ack::Slave ? next.ack_timeout_ms : 0;
    auto fresh = route::store_tree(access, next.routes->pools(), ack_ms);
    // Listeners with trees of their own keep them (route_tree.h).
    next.routes =
        next.routes->roots() > 1 ? route::route_tree::rebase(std::move(fresh), next.routes) : std::move(fresh);
  }
  live.publish(std::make_shared<const live_settings>(std::move(next)));
}

}  // namespace ithaca::server
