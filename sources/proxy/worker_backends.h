// One worker's connections to every backend server it has talked to, found by
// server (a reload that keeps a server keeps these connections). Created on
// first use, closed once the server leaves the configuration and the
// requests on them are answered (sweep()).
//
// Thread: owned by one worker; used only on its machine. Destroyed after the
// machine ended (the worker object outlives it), when no coroutine runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "backend_conn.h"
#include "pool.h"
#include "spool_waits.h"

namespace ithaca::proxy {

class worker_backends {
 public:
  explicit worker_backends(unsigned worker) : worker_(worker) {}
  unsigned worker() const { return worker_; }

  // The connection a client uses to `server`: with `connections: N` a client
  // always gets the same one of the N (`client_tag`), so its requests to one
  // server stay in order.
  backend_conn& conn(const std::shared_ptr<backend_server>& server, std::uint64_t client_tag);

  // The distribution `p`'s keys use on this worker: with auto_eject_hosts
  // and a server down, one over the live servers (rebuilt when any server's
  // health changed, health_epoch()); else the pool's own.
  const distribution* placement(const std::shared_ptr<const pool>& p);

  // The largest value a backend reply may carry: the live limits (a reload
  // may change them; worker.cc). A reply header announcing more is a bad reply.
  // Set once by the worker before any client runs.
  void set_max_value_source(std::function<std::uint64_t()> source) { max_value_source_ = std::move(source); }
  std::size_t max_value() const {
    return max_value_source_ ? static_cast<std::size_t>(max_value_source_())
                             : protocol::backend_reply_parser::kDefaultMaxValue;
  }

  // Opens this worker's connections to every server of `p` whose pool says
  // `preconnect` (all `connections` of each). [at the worker's start]
  void preconnect(const pool& p);

  // Closes the connections of retired servers once idle, frees ended ones.
  // [the worker's sweeper coroutine, every second]
  void sweep();

  // This worker's failed deletes waiting for their spool record to be
  // written (reliable_deletes); its coroutine is started by the worker.
  spool_waits& spool_waiting() { return spool_waits_; }

 private:
  unsigned worker_;
  // First, so destroyed last: the connections' failures, as they go, never
  // find it gone (its coroutine has released every slot by then anyway).
  spool_waits spool_waits_;
  std::function<std::uint64_t()> max_value_source_;
  std::unordered_map<const backend_server*, std::vector<std::unique_ptr<backend_conn>>> conns_;
  // Connections that stopped accepting before they finished (their
  // coroutines still winding down): kept alive here until they have, while
  // a fresh connection takes their place. Freed by sweep().
  std::vector<std::unique_ptr<backend_conn>> draining_;
  struct live_placement {
    std::weak_ptr<const pool> owner;  // an entry whose pool is gone is dropped by sweep()
    uint64_t epoch = 0;
    std::unique_ptr<distribution> live;  // null: every server up (or none)
  };
  std::unordered_map<const pool*, live_placement> placements_;
};

}  // namespace ithaca::proxy
