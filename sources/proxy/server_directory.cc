#include "server_directory.h"

#include <algorithm>

namespace ithaca::proxy {

namespace {
std::string key_of(const std::string& pool, const std::string& address) { return pool + '\0' + address; }
}  // namespace

std::shared_ptr<backend_server> server_directory::acquire(const std::string& scope, const std::string& pool,
                                                          const config::backend_server& spec,
                                                          const server_settings& settings,
                                                          const std::shared_ptr<ssl_ctx_st>& tls_ctx) {
  const std::string key = key_of(scope, spec.address);
  {
    std::lock_guard lock(mutex_);
    const auto [from, to] = servers_.equal_range(key);
    for (auto it = from; it != to; ++it) {
      const backend_server& s = *it->second;
      if (s.settings() == settings && s.spec().weight == spec.weight && s.spec().name == spec.name) return it->second;
    }
  }
  // New settings: a new server object (new connections); one with the old
  // settings is retired once the new tree is published without it
  // (retire_all_but).
  auto fresh = std::make_shared<backend_server>(pool, spec, settings, workers_, tls_ctx);
  std::lock_guard lock(mutex_);
  servers_.emplace(key, fresh);
  return fresh;
}

void server_directory::retire_all_but(const std::vector<std::shared_ptr<backend_server>>& kept) {
  std::vector<std::shared_ptr<backend_server>> gone;
  {
    std::lock_guard lock(mutex_);
    for (auto it = servers_.begin(); it != servers_.end();) {
      if (std::find(kept.begin(), kept.end(), it->second) == kept.end()) {
        gone.push_back(it->second);
        it = servers_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& s : gone) s->retire();
}

std::vector<std::shared_ptr<backend_server>> server_directory::list() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<backend_server>> out;
  for (const auto& [key, s] : servers_) out.push_back(s);
  return out;
}

}  // namespace ithaca::proxy
