// A pool: a named list of backend servers and how keys are spread over them
// (hash function, distribution, hash tag / hash stop). Immutable once built
// (route tree build, at start-up and reload) and shared by every worker.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend_server.h"
#include "distribution/distribution.h"
#include "key_hash_part.h"
#include "router_config.h"

namespace ithaca::proxy {

class server_directory;

class pool {
 public:
  // Builds the pool from its config, finding servers it already had in
  // `dir` (so a reload keeps them). nullptr and *error on failure.
  static std::shared_ptr<const pool> build(const config::pool_config& cfg, server_directory& dir, std::string* error);

  const std::string& name() const { return name_; }
  // Its mcrouter pool-stats group (pool_group_stats.h; -1: none): its
  // requests count there.
  int pool_group() const { return pool_group_; }
  const std::vector<std::shared_ptr<backend_server>>& servers() const { return servers_; }
  bool allow_flush() const { return allow_flush_; }
  // mcrouter's keep_routing_prefix: keys go to the servers with the routing
  // prefix the routing_prefix route took off (request.h).
  bool keep_routing_prefix() const { return keep_routing_prefix_; }

  // The index (into servers()) of the server that holds `key`.
  uint32_t locate(std::string_view key) const { return locate(key, *dist_); }
  // The same over another distribution of this pool's servers (the live
  // ones: auto_eject_hosts).
  uint32_t locate(std::string_view key, const distribution& d) const {
    if (d.size() == 1) return d.pick({}, 0);
    if (buckets_ != 0) return locate_bucket(key_hash_part(key, hash_options_), d);
    return d.locate(key_hash_part(key, hash_options_));
  }
  // mcrouter's failure domain of server `i` (config::backend_server); 0: none.
  uint32_t failure_domain(uint32_t i) const { return i < domains_.size() ? domains_[i] : 0; }
  // mcrouter's bucketize: buckets (0: off).
  uint32_t buckets() const { return buckets_; }

  // twemproxy's auto_eject_hosts: a down server leaves the ring (its keys
  // go to the others) instead of failing fast.
  bool auto_eject() const { return auto_eject_; }
  // How keys are spread (introspection names it: mcrouter's Ch3, ...).
  distribution_kind placement() const { return kind_; }
  // A distribution over the servers up now, picking indexes into
  // servers(); nullptr when every server is up (use the pool's own) or none
  // is (fail fast then). [any thread; builds a new one each call]
  std::unique_ptr<distribution> live_distribution() const;

 private:
  pool() = default;
  // The server of the bucket of `part` (ch3 over buckets_), placed by its
  // decimal number, as mcrouter's BucketHashSelector hashes it.
  uint32_t locate_bucket(std::string_view part, const distribution& d) const;
  std::string name_;
  int pool_group_ = -1;
  std::vector<std::shared_ptr<backend_server>> servers_;
  std::unique_ptr<distribution> dist_;
  key_hash_options hash_options_;
  bool allow_flush_ = false;
  bool keep_routing_prefix_ = false;
  bool auto_eject_ = false;
  uint32_t buckets_ = 0;
  distribution_kind kind_ = distribution_kind::Ketama;
  hash_kind hash_ = hash_kind::Fnv1a_64;
  std::vector<server_spec> specs_;
  std::vector<uint32_t> domains_;  // by server; empty: none has one
};

}  // namespace ithaca::proxy
