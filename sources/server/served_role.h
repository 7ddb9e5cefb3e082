// What clients may do with this node, by its replication role, and the one
// way that changes while the server runs (roles by virtual IP).
//
// The live cell (live_settings.h) has two writers: the pooler (a SIGHUP
// reload) and, on a node whose role follows a virtual IP, the role monitor (a
// promotion or a demotion, role_monitor.h). Each holds publish_mutex() from
// reading the access and the snapshot in force to publishing the next, so
// neither undoes the other: a reload builds its tree for the access in force,
// a role change rebuilds the tree of the snapshot in force.
//
// Workers learn a role change as they learn a reload: at their next batch,
// from the snapshot's route tree (local, read_only or closed), with no lock
// on their hot path; the pooler reads close_clients at each accept.
//
// Lock order: publish_mutex_ -> server_directory::mutex_ (a reload's tree
// build) -> snapshot_cell::mutex_. Nothing suspends while it is held.
#pragma once

#include <atomic>
#include <mutex>

#include "live_settings.h"
#include "route_builder.h"

namespace ithaca::server {

class served_role {
 public:
  explicit served_role(route::store_access initial) : access_(initial) {}
  served_role(const served_role&) = delete;
  served_role& operator=(const served_role&) = delete;

  // [any thread; acquire load]
  route::store_access access() const { return access_.load(std::memory_order_acquire); }
  // Held by each writer of the live cell from its read to its publish.
  std::mutex& publish_mutex() { return publish_mutex_; }

  // A role change: sets the access and publishes a snapshot that follows it
  // (the same settings; the store tree rebuilt over the same pools when the
  // file has no `route:`; close_clients). [role machine]
  void change(route::store_access access, live_cell& live);

 private:
  std::mutex publish_mutex_;
  std::atomic<route::store_access> access_;  // written under publish_mutex_
};

}  // namespace ithaca::server
