// Every backend server the route trees know, so that a reload finds the
// servers it keeps (same pool, address and settings) and keeps their health,
// counters and open connections. A server no tree names any more is retired
// (its connections close once their requests are answered).
//
// Thread: build/retire on the pooler (start-up, SIGHUP); `stats` reads the
// list from a worker. Lock: `mutex_`, a leaf, held only to copy or edit the
// list (no I/O, no log call, no suspension under it).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend_server.h"

namespace ithaca::proxy {

class server_directory {
 public:
  explicit server_directory(unsigned workers) : workers_(workers) {}

  // The server at `spec.address` with these settings in `scope` (a pool's
  // name: that pool's own; "": every pool's, mcrouter's one destination per
  // address and settings): the one already known (which keeps its TLS
  // context), or a new one named by `pool` (with `tls_ctx`, the pool's for
  // settings.tls). One whose settings changed is left to retire_all_but.
  std::shared_ptr<backend_server> acquire(const std::string& scope, const std::string& pool,
                                          const config::backend_server& spec, const server_settings& settings,
                                          const std::shared_ptr<ssl_ctx_st>& tls_ctx = nullptr);

  // After a new tree is published: servers not in `kept` are retired and
  // forgotten. [pooler]
  void retire_all_but(const std::vector<std::shared_ptr<backend_server>>& kept);

  // Every server, in (pool, address) order. [any thread]
  std::vector<std::shared_ptr<backend_server>> list() const;

  unsigned workers() const { return workers_; }

 private:
  unsigned workers_;
  mutable std::mutex mutex_;                                        // leaf
  // [mutex_] key: scope + '\0' + address; one per settings under a key
  std::multimap<std::string, std::shared_ptr<backend_server>> servers_;
};

}  // namespace ithaca::proxy
