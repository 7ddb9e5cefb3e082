#include "restart_only.h"

#include <algorithm>

namespace ithaca::config {

// The restart-only settings that differ between `running` and `fresh`, by
// name, in the order of the config's sections (the list and why each is
// restart-only: restart_only.h). One comparison per setting. [the pooler's
// reload, any thread; pure, no lock]
std::vector<std::string> restart_only_changes(const config& running, const config& fresh) {
  std::vector<std::string> out;
  auto check = [&out](const char* name, bool changed) {
    if (changed) out.emplace_back(name);
  };
  const listen_config& a = running.listen;
  const listen_config& b = fresh.listen;
  check("listen.tcp", a.tcp != b.tcp);
  check("listen.unix", a.unix_paths != b.unix_paths);
  check("--listen-sock-fd", a.inherited_fds != b.inherited_fds);
  check("listen.unix_mode", a.unix_mode != b.unix_mode);
  check("listen.udp", a.udp_port != b.udp_port);
  check("listen.backlog", a.backlog != b.backlog);
  check("server.workers", running.server.workers != fresh.server.workers);
  check("server.io_backend", running.server.backend != fresh.server.backend);
  check("server.stack_size", running.server.stack_size != fresh.server.stack_size);
  check("server.read_buffer_size", running.server.read_buffer_size != fresh.server.read_buffer_size);
  check("server.binding_protocol", running.server.binding != fresh.server.binding);
  check("server.prefix_delimiter", running.server.prefix_delimiter != fresh.server.prefix_delimiter);
  check("server.detail_enabled", running.server.detail_enabled != fresh.server.detail_enabled);
  // Authentication is on or off for the life of the process (the parsers'
  // binding and each connection's state follow it); a SIGHUP re-reads the
  // files' contents (server/auth_store.h), not their names.
  check("server.auth_file", running.server.auth_file != fresh.server.auth_file);
  check("server.sasl", running.server.sasl != fresh.server.sasl);
  check("server.sasl_pwdb", running.server.sasl_pwdb != fresh.server.sasl_pwdb);
  check("cache.large_value_dir", running.cache.large_value_dir != fresh.cache.large_value_dir);
  check("cache.memory_file", running.cache.memory_file != fresh.cache.memory_file);
  check("cache.hash_power", running.cache.hash_power != fresh.cache.hash_power);
  check("cache.hash_expand", running.cache.hash_expand != fresh.cache.hash_expand);
  check("cache.lru_crawler", running.cache.lru_crawler != fresh.cache.lru_crawler);
  check("cache.slab_growth_factor", running.cache.slab_growth_factor != fresh.cache.slab_growth_factor);
  check("cache.slab_min_size", running.cache.slab_min_size != fresh.cache.slab_min_size);
  check("cache.cas_enabled", running.cache.cas_enabled != fresh.cache.cas_enabled);
  check("cache.eviction", running.cache.eviction != fresh.cache.eviction);
  check("logging.file", running.logging.file != fresh.logging.file);
  check("logging.async_queue", running.logging.async_queue != fresh.logging.async_queue);
  check("router.spool_dir", running.router.spool_dir != fresh.router.spool_dir);
  check("router.spool_max_size", running.router.spool_max_size != fresh.router.spool_max_size);
  check("router.spool_fsync", running.router.spool_fsync != fresh.router.spool_fsync);
  // Replication: the role, its listener or connection and its buffers are set
  // up once at start-up.
  const replication_config& ra = running.replication;
  const replication_config& rb = fresh.replication;
  check("replication", ra.role != rb.role || ra.listen_host != rb.listen_host || ra.port != rb.port ||
                           ra.master != rb.master || ra.slave_timeout_ms != rb.slave_timeout_ms ||
                           ra.heartbeat_interval_ms != rb.heartbeat_interval_ms ||
                           ra.master_timeout_ms != rb.master_timeout_ms || ra.send_buffer != rb.send_buffer ||
                           ra.queue_size != rb.queue_size || ra.serve_reads != rb.serve_reads || ra.allow != rb.allow);
  // Roles by virtual IP: the role monitor is set up at start-up too.
  check("replication.tls", ra.tls != rb.tls);
  check("replication.virtual_ip", ra.virtual_ip != rb.virtual_ip);
  check("replication.check_interval", ra.check_interval_ms != rb.check_interval_ms);
  check("replication.failover_delay", ra.failover_delay_ms != rb.failover_delay_ms);
  // Per listener of its own (same addresses: listener_changes() refuses others).
  const auto& la = running.router.listeners;
  const auto& lb = fresh.router.listeners;
  bool backlog = false;
  bool clients = false;
  for (size_t i = 0; i < std::min(la.size(), lb.size()); i++) {
    backlog = backlog || la[i].backlog != lb[i].backlog;
    clients = clients || la[i].max_clients != lb[i].max_clients;
  }
  check("listeners.backlog", backlog);
  check("listeners.client_connections", clients);
  // The takeover socket is bound once, at start-up.
  check("takeover", running.takeover != fresh.takeover);
  // The metrics listener is bound once, at start-up.
  check("metrics.listen", running.metrics != fresh.metrics);
  // TLS: the context is built at start-up from these; a SIGHUP (or
  // refresh_certs) re-reads the certificate files they name, as memcached does.
  check("tls", running.tls != fresh.tls);
  // The process is set up once: its pid file, user, limits and pages.
  check("process", running.process != fresh.process);
  return out;
}

std::string listener_changes(const config& running, const config& fresh) {
  std::vector<std::string> a;
  std::vector<std::string> b;
  for (const listener_route& l : running.router.listeners) a.push_back(l.address);
  for (const listener_route& l : fresh.router.listeners) b.push_back(l.address);
  if (a == b) return "";
  std::string out;
  std::vector<std::string> said;
  auto add = [&out, &said](const std::string& what) {
    if (std::find(said.begin(), said.end(), what) != said.end()) return;  // once each
    said.push_back(what);
    out += (out.empty() ? "" : ", ") + what;
  };
  for (const std::string& x : b) {
    if (std::count(b.begin(), b.end(), x) > std::count(a.begin(), a.end(), x)) add("listener " + x + " added");
  }
  for (const std::string& x : a) {
    if (std::count(a.begin(), a.end(), x) > std::count(b.begin(), b.end(), x)) add("listener " + x + " removed");
  }
  if (out.empty()) out = "the listeners are in another order";
  return out;
}

}  // namespace ithaca::config
