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
  static std::shared_ptr<const pool> build(const config::pool_config& cfg, server_directory& dir,
                                           std::string* error);

  const std::string& name() const { return name_; }
  const std::vector<std::shared_ptr<backend_server>>& servers() const { return servers_; }
  bool allow_flush() const { return allow_flush_; }

  // The index (into servers()) of the server that holds `key`.
  uint32_t locate(std::string_view key) const {
    if (servers_.size() == 1) return 0;
    return dist_->locate(key_hash_part(key, hash_options_));
  }

 private:
  pool() = default;
  std::string name_;
  std::vector<std::shared_ptr<backend_server>> servers_;
  std::unique_ptr<distribution> dist_;
  key_hash_options hash_options_;
  bool allow_flush_ = false;
};

}  // namespace ithaca::proxy
