#include "pool.h"

#include <charconv>

#include "hash/hash_functions.h"
#include "pool_group_stats.h"
#include "server_directory.h"
#include "tls_setup.h"

namespace ithaca::proxy {

namespace {

server_settings settings_of(const config::pool_config& c) {
  server_settings s;
  s.protocol = c.protocol;
  s.connect_timeout_ms = c.connect_timeout_ms;
  s.timeout_ms = c.timeout_ms;
  s.late_reply_timeout_ms = c.late_reply_timeout_ms;
  s.connections = c.connections;
  s.max_inflight = c.max_inflight;
  s.max_queued = c.max_queued;
  s.max_shadow_requests = c.max_shadow_requests;
  s.failure_limit = c.failure_limit;
  s.retry_interval_ms = c.retry_interval_ms;
  s.retry_interval_max_ms = c.retry_interval_max_ms;
  s.preconnect = c.preconnect;
  s.tls = c.tls;
  return s;
}

// The name ketama hashes: twemproxy's "host:port" (or the configured name);
// a unix socket is named by its path, as twemproxy does.
std::string point_name(distribution_kind kind, const config::backend_server& b) {
  if (b.address.starts_with("unix:")) return b.name.empty() ? b.address.substr(5) : b.name;
  const std::size_t colon = b.address.rfind(':');
  std::string host = b.address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  const auto port = static_cast<std::uint16_t>(std::stoi(b.address.substr(colon + 1)));
  return server_point_name(kind, host, port, b.name);
}

}  // namespace

std::shared_ptr<const pool> pool::build(const config::pool_config& cfg, server_directory& dir, std::string* error) {
  auto p = std::shared_ptr<pool>(new pool());
  p->name_ = cfg.name;
  p->pool_group_ = pool_group_of(p->name_);
  p->allow_flush_ = cfg.allow_flush;
  p->keep_routing_prefix_ = cfg.keep_routing_prefix;
  p->auto_eject_ = cfg.auto_eject_hosts;
  p->hash_options_.hash_tag = cfg.hash_tag;
  p->hash_options_.hash_stop = cfg.hash_stop;
  p->buckets_ = cfg.buckets;
  const distribution_kind kind = cfg.dist;
  std::vector<server_spec> specs;
  const server_settings settings = settings_of(cfg);
  // One client context for the pool's servers, read from its files now (at
  // start-up or reload, on the pooler): a bad certificate fails the load.
  // A server kept by the reload keeps the context it has.
  net::ssl_ctx_ptr tls_ctx;
  if (settings.tls.enabled) {
    std::string why;
    tls_ctx = net::make_client_ctx(settings.tls, &why);
    if (!tls_ctx) {
      if (error) *error = "pool '" + cfg.name + "': tls: " + why;
      return nullptr;
    }
  }
  for (const config::backend_server& b : cfg.servers) {
    p->servers_.push_back(dir.acquire(cfg.shared_servers ? "" : cfg.name, cfg.name, b, settings, tls_ctx));
    specs.push_back(server_spec{point_name(kind, b), b.weight, b.fraction});
    if (b.failure_domain != 0) p->domains_.resize(cfg.servers.size(), 0);
  }
  for (std::size_t i = 0; i < p->domains_.size(); ++i) p->domains_[i] = cfg.servers[i].failure_domain;
  std::string why;
  p->dist_ = make_distribution(kind, specs, cfg.hash, &why);
  if (!p->dist_) {
    if (error) *error = "pool '" + cfg.name + "': " + why;
    return nullptr;
  }
  p->kind_ = kind;
  p->hash_ = cfg.hash;
  p->specs_ = std::move(specs);
  return p;
}

std::unique_ptr<distribution> pool::live_distribution() const {
  std::vector<uint32_t> live;
  for (uint32_t i = 0; i < servers_.size(); ++i) {
    if (servers_[i]->up()) live.push_back(i);
  }
  if (live.empty() || live.size() == servers_.size()) return nullptr;
  return make_live_distribution(kind_, specs_, live, hash_, nullptr);
}

uint32_t pool::locate_bucket(std::string_view part, const distribution& d) const {
  char text[16];
  const auto end = std::to_chars(text, text + sizeof text, furc_hash(part, buckets_)).ptr;
  return d.locate(std::string_view(text, static_cast<std::size_t>(end - text)));
}

}  // namespace ithaca::proxy
