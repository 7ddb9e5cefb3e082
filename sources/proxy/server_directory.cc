#include "server_directory.h"

#include <algorithm>

namespace ithaca::proxy {

namespace {
std::string key_of(const std::string& pool, const std::string& address) { return pool + '\0' + address; }
}  // namespace

std::shared_ptr<backend_server> server_directory::acquire(const std::string& pool, const config::backend_server& spec,
                                                          const server_settings& settings,
                                                          const std::shared_ptr<ssl_ctx_st>& tls_ctx) {
  const std::string key = key_of(pool, spec.address);
  std::shared_ptr<backend_server> old;
  {
    std::lock_guard lock(mutex_);
    auto it = servers_.find(key);
    if (it != servers_.end() && it->second->settings() == settings && it->second->spec().weight == spec.weight &&
        it->second->spec().name == spec.name) {
      return it->second;
    }
    if (it != servers_.end()) old = it->second;
  }
  // Settings changed: a new server object (new connections); the old one is
  // retired once the new tree is published (retire_all_but).
  auto fresh = std::make_shared<backend_server>(pool, spec, settings, workers_, tls_ctx);
  std::lock_guard lock(mutex_);
  servers_[key] = fresh;
  if (old) retired_pending_.push_back(std::move(old));
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
    for (auto& s : retired_pending_) gone.push_back(std::move(s));
    retired_pending_.clear();
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
