#include "instance.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>

#include <unistd.h>

#include "any_address.h"
#include "auth_store.h"
#include "conn_registry.h"
#include "delete_spool.h"
#include "metrics_listener.h"
#include "pooler.h"
#include "prefix_stats.h"
#include "preflight.h"
#include "tls_context.h"
#include "tls_setup.h"
#include "process_setup.h"
#include "role_monitor.h"
#include "route_builder.h"
#include "fanout.h"
#include "item_dump.h"
#include "served_role.h"
#include "service_info_of.h"
#include "spool_dir.h"
#include "server_directory.h"
#include "pool_group_stats.h"
#include "pool_stats_file.h"
#include "server_clock.h"
#include "watch_evictions.h"
#include "server_stats.h"
#include "slave.h"
#include "log.h"
#include "store.h"
#include "takeover_client.h"
#include "takeover_path.h"
#include "ready_notify.h"
#include "runtime_vars_file.h"
#include "udp_server.h"
#include "worker.h"

namespace ithaca::server {

namespace {

mm::backend_kind backend_of(config::io_backend b) {
  switch (b) {
    case config::io_backend::IoUring: return mm::backend_kind::IoUring;
    case config::io_backend::Epoll: return mm::backend_kind::Epoll;
    case config::io_backend::Auto: break;
  }
  return mm::backend_kind::Auto;
}

// The hosts a listen.tcp host stands for: "*" is 0.0.0.0 and [::] (any_address.h).
std::vector<std::string> hosts_of(const config::tcp_address& a) {
  return a.host == "*" ? any_address_hosts() : std::vector<std::string>{a.host};
}

// memcached binds its UDP port on every -l host; a host listed twice (two tcp
// ports) is bound once.
std::vector<std::string> udp_addresses(const config::config& cfg) {
  std::vector<std::string> out;
  if (cfg.listen.udp_port == 0) return out;
  for (const auto& a : cfg.listen.tcp) {
    for (const std::string& host : hosts_of(a)) {
      std::string text = config::to_string(config::tcp_address{host, cfg.listen.udp_port});
      if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(text);
    }
  }
  return out;
}

// replication.tls: both sides' contexts, read once at start-up (restart
// only). A bad file fails the start.
struct repl_tls {
  net::ssl_ctx_ptr server;  // the master's slave listener (mutual)
  net::ssl_ctx_ptr client;  // the slave's connection to its master
};

replication::fanout_settings fanout_settings_of(const config::config& cfg, const repl_tls& tls) {
  replication::fanout_settings r;
  r.tls_ctx = tls.server;
  r.listen = config::to_string(config::tcp_address{config::replication_listen_host(cfg), cfg.replication.port});
  r.allow = cfg.replication.allow;
  r.slave_timeout_ms = cfg.replication.slave_timeout_ms;
  r.send_buffer = cfg.replication.send_buffer;
  r.queue_size = cfg.replication.queue_size;
  return r;
}

replication::slave_settings slave_settings_of(const config::config& cfg, const repl_tls& tls) {
  replication::slave_settings s;
  s.tls_ctx = tls.client;
  s.tls_server_name = cfg.replication.tls.server_name;
  s.master_host = cfg.replication.master;
  s.master_port = std::to_string(cfg.replication.port);
  s.heartbeat_interval_ms = cfg.replication.heartbeat_interval_ms;
  s.master_timeout_ms = cfg.replication.master_timeout_ms;
  s.max_value = cfg.cache.item_size_max;
  return s;
}

role_settings role_settings_of(const config::config& cfg, const mm::machine_config& mc, const repl_tls& tls) {
  role_settings r;
  replication::parse_ip_literal(cfg.replication.virtual_ip, r.virtual_ip);  // validated with the config
  r.check_interval_ms = cfg.replication.check_interval_ms;
  r.failover_delay_ms = cfg.replication.failover_delay_ms;
  r.slave_access = route::slave_access(cfg.replication.serve_reads);
  r.slave = slave_settings_of(cfg, tls);
  r.slave.master_host = cfg.replication.virtual_ip;
  r.machine = mc;
  return r;
}

// `listen:`'s addresses serve the default root; then each listener with a
// tree of its own, root 1 + i (route_tree.h).
std::vector<listen_entry> listen_addresses(const config::config& cfg) {
  std::vector<listen_entry> out;
  // With TLS on, every TCP listener is a TLS one but the notls: ones; unix
  // sockets stay plaintext (as memcached's do).
  const bool tls = cfg.tls.enabled;
  for (const auto& a : cfg.listen.tcp) {
    bool first = true;
    for (const std::string& host : hosts_of(a)) {
      config::tcp_address one = a;
      one.host = host;
      listen_entry e{config::to_string(one)};
      e.tls = tls && !a.notls;
      e.tls_peer = a.peer;
      e.protocol = a.protocol;
      e.port_of_previous = !first && a.port == 0;  // "*" on port 0: [::] takes 0.0.0.0's port
      first = false;
      out.push_back(e);
    }
  }
  for (const auto& p : cfg.listen.unix_paths) out.push_back(listen_entry{"unix:" + p});
  for (int fd : cfg.listen.inherited_fds) {
    listen_entry e{"fd:" + std::to_string(fd)};
    e.tls = tls;
    out.push_back(e);
  }
  for (std::size_t i = 0; i < cfg.router.listeners.size(); i++) {
    const config::listener_route& l = cfg.router.listeners[i];
    out.push_back(listen_entry{l.address, i + 1, static_cast<int>(l.backlog), l.max_clients,
                               tls && !l.address.starts_with("unix:")});
  }
  return out;
}
// TLS (-Z): the certificate files are read now, so a missing or bad one
// fails the start with memcached's words (tls_context.h); and
// replication.tls's contexts. False (logged) when one cannot be made.
bool make_tls_contexts(const config::config& cfg, std::shared_ptr<tls_context>& tls, repl_tls& rtls) {
  if (cfg.tls.enabled) {
    std::string tls_error;
    tls = tls_context::create(cfg.tls, &tls_error);
    if (!tls) {
      spdlog::critical("{}", tls_error);
      return false;
    }
  }
  if (cfg.replication.tls.enabled) {
    std::string why;
    rtls.server = net::make_mutual_server_ctx(cfg.replication.tls, &why);
    if (rtls.server) rtls.client = net::make_client_ctx(cfg.replication.tls, &why);
    if (!rtls.client) {
      spdlog::critical("replication.tls: {}", why);
      return false;
    }
  }
  return true;
}

// -Y / -S: the password files, read before anything serves (memcached's
// words when -Y's cannot be). False (logged) when they cannot be read.
bool open_auth(const config::config& cfg, auth_store& auth) {
  if (cfg.server.auth_file.empty() && !cfg.server.sasl) return true;
  std::string why;
  std::vector<std::string> notes;
  if (!auth.open(cfg.server, &why, &notes)) {
    spdlog::critical("{}", why);
    return false;
  }
  for (const std::string& n : notes) spdlog::warn("auth file {}: {}", cfg.server.auth_file, n);
  return true;
}

// -e FILE at start-up: the items a SIGUSR1 stop left are served again, or one line says
// why not (a clean start). [main thread, before any machine]
void restore_memory_file(store::store& st, const std::string& file, const server_clock& clock) {
  const store::store::memory_file_result r = st.restore_memory_file(clock.now());
  if (r.why.empty())
    spdlog::warn("memory file {}: {} items restored ({} dropped: expired, flushed, large values or leases)", file,
                 r.restored, r.dropped);
  else
    spdlog::warn("memory file {}: a clean start: {}", file, r.why);
}

// -e FILE after a SIGUSR1 stop, once every machine stopped: written clean for the next
// start. [main thread]
void save_memory_file(store::store& st, const std::string& file, const server_clock& clock) {
  std::string why;
  if (st.save_memory_file(clock.now(), why))
    spdlog::warn("memory file {}: saved ({} items) for the next start", file, st.stats().curr_items);
  else
    spdlog::error("memory file {}: not saved ({}): the next start is a clean one", file, why);
}

store::store_config store_config_of(const config::config& cfg) {
  store::store_config sc;
  sc.bucket_count = uint64_t{1} << cfg.cache.hash_power;
  sc.memory_limit = cfg.cache.memory_limit;
  sc.item_size_max = cfg.cache.item_size_max;
  sc.large_value_threshold = cfg.cache.large_value_threshold;
  sc.large_value_disk_limit = cfg.cache.large_value_disk_limit;
  sc.temp_dir = cfg.cache.large_value_dir;
  sc.lease_interval_ms = cfg.cache.lease_interval_ms;
  sc.slab_classes.factor = cfg.cache.slab_growth_factor;
  sc.slab_classes.min_size = cfg.cache.slab_min_size;
  sc.slab_classes.chunk_max = static_cast<uint32_t>(config::slab_chunk_max(cfg.cache));
  sc.large_pages = cfg.process.large_pages;  // -L (large_pages.h)
  sc.memory_file = cfg.cache.memory_file;    // -e
  sc.evictions = cfg.cache.evictions;
  sc.cas_enabled = cfg.cache.cas_enabled;
  sc.eviction = cfg.cache.eviction == config::cache_eviction::Clock ? store::eviction_policy::clock
                                                                    : store::eviction_policy::s3fifo;
  return sc;
}

// Reliable deletes' spool (proxy/delete_spool.h): its machine runs in the
// router role, before the workers (they spool) and after them (it writes
// what they queued); a spool an earlier run left is replayed. Its
// directory must be usable now: a spool that cannot write answers every
// failed delete with the failure, which a deployment must hear of at once.
// False (logged) when it cannot start; `spool` stays null without one.
bool start_spool(const config::config& cfg, const proxy::server_directory& servers, const mm::machine_config& mc,
                 std::unique_ptr<proxy::delete_spool>& spool) {
  if (!config::uses_spool(cfg)) return true;
  const std::string dir = config::spool_dir_of(cfg);
  std::string why;
  bool made = false;
  if (!config::make_spool_dir(dir, &why, &made)) {
    spdlog::critical("router.spool_dir: {} (reliable deletes' spool; name a writable directory)", why);
    return false;
  }
  proxy::spool_settings ss{dir, cfg.router.spool_max_size, cfg.router.spool_fsync, made};
  // mcrouter's -a: its asynclog too, the region its default route's.
  ss.asynclog.dir = cfg.router.mcrouter_asynclog_dir;
  ss.asynclog.version2 = cfg.router.mcrouter_asynclog_v2;
  ss.asynclog.router_name = cfg.router.mcrouter_router_name;
  const std::string& route = cfg.router.default_route;
  if (route.size() > 1 && route[0] == '/') ss.asynclog.region = route.substr(1, route.find('/', 1) - 1);
  spool = std::make_unique<proxy::delete_spool>(std::move(ss));
  if (!spool->start(mc)) {
    spdlog::critical("spool machine did not start (see the log above)");
    return false;
  }
  for (const auto& s : servers.list()) spool->adopt(s);
  return true;
}

// The workers' settings from the config: the protocol every listener binds
// (-S binary, -Y ascii: memcached binds them so; validate() refuses a -B that
// says otherwise; else -B's), SASL, the password tables when in use, the read
// buffer; and `stats detail` (-D): the delimiter for good, on at start if asked.
void set_worker_settings(worker_shared& shared, const config::config& cfg, auth_store& auth) {
  shared.read_buffer_size = cfg.server.read_buffer_size;
  stats::prefix_stats::instance().set_delimiter(cfg.server.prefix_delimiter);
  stats::prefix_stats::instance().set_enabled(cfg.server.detail_enabled);
  shared.parser.item_size_max = cfg.cache.item_size_max;
  using binding = protocol::parser_settings::binding;
  shared.parser.binding_protocol = cfg.server.sasl                 ? binding::Binary
                                   : !cfg.server.auth_file.empty() ? binding::Ascii
                                                                   : cfg.server.binding;
  // Under -S or -Y a listener's proto[] prefix may not speak past the login.
  shared.auth_binds_protocol = cfg.server.sasl || !cfg.server.auth_file.empty();
  shared.parser.sasl = cfg.server.sasl;
  // An mcrouter config speaks mcrouter's error words (parser_settings.h);
  // fixed at start: a reload that changes the config's dialect keeps them.
  shared.parser.mcrouter_replies = cfg.source.mcrouter;
  if (auth.ascii_enabled() || auth.sasl_enabled()) shared.auth = &auth;
}

// UDP sockets are bound here, before any machine starts, so a port in use
// fails the start at once and the log shows the udp line before the tcp one.
// Each worker gets its share; `all` lists them (a takeover hands them on).
// A takeover's (takeover_client.h) come from the old process and are served
// only once this one serves: `later` gets them instead of the workers. False
// (logged) on a failure.
bool bind_udp(const config::config& cfg, std::vector<std::unique_ptr<worker>>& workers, takeover_handoff* handoff,
              std::vector<udp_socket>& all, std::vector<std::vector<udp_socket>>& later) {
  std::vector<std::vector<udp_socket>> udp;
  const bool ok = handoff ? takeover_udp(*handoff, udp_addresses(cfg), cfg.server.workers, udp)
                          : udp_bind_listeners(udp_addresses(cfg), cfg.server.workers, udp);
  if (!ok) {
    spdlog::critical("could not bind the udp port (see the log above)");
    return false;
  }
  for (const auto& mine : udp) all.insert(all.end(), mine.begin(), mine.end());
  if (handoff) {
    later = std::move(udp);
    return true;
  }
  for (size_t i = 0; i < udp.size(); i++) {
    for (udp_socket& s : udp[i]) workers[i]->add_udp_socket(std::move(s));
  }
  return true;
}

// After a takeover this process serves; the old one exits. Its spool files
// and its replication port are this one's once it has gone: waits (within
// `timeout_ms`) until `pid` has exited (or is a zombie). [main thread]
void wait_for_exit(pid_t pid, uint64_t timeout_ms) {
  if (pid <= 0) return;
  const int64_t deadline = mm::now_ns() + static_cast<int64_t>(timeout_ms) * 1000000;
  const std::string stat = "/proc/" + std::to_string(pid) + "/stat";
  while (mm::now_ns() < deadline) {
    std::FILE* f = std::fopen(stat.c_str(), "r");
    if (f == nullptr) return;
    char line[512] = {};
    const size_t n = std::fread(line, 1, sizeof line - 1, f);
    std::fclose(f);
    const char* paren = std::strrchr(line, ')');  // the state follows the command's last ')'
    if (n == 0 || (paren != nullptr && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X'))) return;
    ::usleep(10000);
  }
  spdlog::warn("takeover: the old process (pid {}) has not exited after {} ms", pid, timeout_ms);
}

// After a takeover: waits (within `timeout_ms`, 10 ms a try) until a TCP
// listener can bind `address` ("host:port", SO_REUSEADDR as machinarium's
// listen): the old process's leader thread is a zombie a moment before its
// last descriptor is gone. [main thread]
void wait_port_free(const std::string& address, uint64_t timeout_ms) {
  mm::address a;
  std::string error;
  if (!mm::address::parse(address, a, &error)) return;  // the listen itself says why
  const int64_t deadline = mm::now_ns() + static_cast<int64_t>(timeout_ms) * 1000000;
  while (mm::now_ns() < deadline) {
    const int fd = ::socket(a.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (a.storage.ss_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    const bool bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&a.storage), a.length) == 0;
    ::close(fd);
    if (bound || errno != EADDRINUSE) return;
    ::usleep(10000);
  }
}

// The workers' machines, in order; `started` lists those that run (to be
// stopped and joined whatever the result). False (logged) at the first that
// does not start.
bool start_workers(const mm::machine_config& mc, std::vector<std::unique_ptr<worker>>& workers,
                   std::vector<worker*>& started) {
  for (auto& w : workers) {
    if (!w->start(mc)) {
      spdlog::critical("worker machine did not start (see the log above)");
      return false;
    }
    started.push_back(w.get());
  }
  return true;
}

// A configured slave's machine (replication::slave_main), or null (logged)
// when it cannot start. The store, clock and counters outlive it.
mm::machine* start_slave(const config::config& cfg, const mm::machine_config& mc, const repl_tls& rtls,
                         store::store& st, server_clock& clock, replication::repl_counters& repl) {
  mm::machine_config sm = mc;
  sm.name = "slave";
  replication::slave_settings ss = slave_settings_of(cfg, rtls);
  store::store* sp = &st;
  mm::machine* m = mm::machine_create(sm, [ss, sp, &clock, &repl] {
    replication::slave_main(
        ss, *sp, [&clock] { return clock.now(); }, repl);
  });
  if (!m) spdlog::critical("slave machine did not start (see the log above)");
  return m;
}

// The node's first role: a configured master starts its fan-out, a
// configured slave serves the store as serve_reads says; with `role: auto`
// the virtual IP decides now (first_role_of), before the first snapshot, so
// clients meet the right role from the start.
struct first_role {
  bool start_fanout = false;
  route::store_access access = route::store_access::ReadWrite;
  role_settings settings;  // role: auto only
  role_state state = role_state::Slave;
};

first_role decide_first_role(const config::config& cfg, const mm::machine_config& mc, const repl_tls& rtls,
                             replication::repl_counters& repl) {
  first_role f;
  const config::replication_role r = cfg.replication.role;
  f.start_fanout = r == config::replication_role::Master;
  if (r == config::replication_role::Slave) f.access = route::slave_access(cfg.replication.serve_reads);
  if (r != config::replication_role::Auto) return f;
  f.settings = role_settings_of(cfg, mc, rtls);
  f.state = first_role_of(f.settings, repl);
  f.start_fanout = f.state == role_state::Master;
  if (!f.start_fanout) f.access = f.settings.slave_access;
  return f;
}

// A master's (or a possible master's) replication: the ack state and the
// fan-out machine's object (not started here), its observer installed on the
// store before any worker can touch it.
void make_fanout(const config::config& cfg, const repl_tls& rtls, store::store& st, server_clock& clock,
                 replication::repl_counters& repl, std::unique_ptr<replication::ack_state>& repl_ack,
                 std::unique_ptr<replication::fanout>& repl_fanout) {
  repl_ack = std::make_unique<replication::ack_state>(cfg.server.workers, repl);
  repl_fanout = std::make_unique<replication::fanout>(
      fanout_settings_of(cfg, rtls), st, [&clock] { return clock.now(); }, clock.wall_base(), repl, repl_ack.get());
  st.set_observer(repl_fanout->observer());
}

// Takeover without replication (takeover_server.h): a fan-out with no
// listener, its machine started only when a new process asks for the store,
// its observer installed now (one relaxed load per change until then).
void make_takeover_fanout(const config::config& cfg, store::store& st, server_clock& clock,
                          replication::repl_counters& repl, std::unique_ptr<replication::fanout>& repl_fanout) {
  replication::fanout_settings fs = fanout_settings_of(cfg, repl_tls{});
  fs.listen.clear();
  repl_fanout = std::make_unique<replication::fanout>(
      std::move(fs), st, [&clock] { return clock.now(); }, clock.wall_base(), repl, nullptr);
  st.set_observer(repl_fanout->observer());
}

// The first live settings: the config's, with the route tree built for the
// store access the first role gives. Null (logged) when the tree cannot be built.
std::shared_ptr<const live_settings> first_live_settings(const config::config& cfg, const config::cli_options& cli,
                                                         proxy::server_directory& servers, route::store_access access) {
  std::string route_error;
  live_settings first = live_settings_of(cfg);
  first.routes = route::build_route_tree(cfg, servers, access, &route_error);
  first.close_clients = access == route::store_access::Closed;
  first.config_file = cli.config_path;
  first.config_loaded_at = static_cast<int64_t>(std::time(nullptr));
  first.info = service_info_of(cfg, cli.config_path);
  if (!first.routes) {
    spdlog::critical("{}", route_error);
    return nullptr;
  }
  return std::make_shared<const live_settings>(std::move(first));
}

// The Prometheus page, when configured: bound before the client listeners, so
// a port in use fails the start. False (logged) when it does not start.
bool start_metrics(const config::config& cfg, server_stats& stats, const std::vector<worker*>& started,
                   const mm::machine_config& mc, std::unique_ptr<metrics_listener>& metrics) {
  if (!cfg.metrics.enabled) return true;
  metrics_listener_settings ms;
  ms.listen = config::to_string(cfg.metrics.listen);
  metrics = std::make_unique<metrics_listener>(ms, stats, started);
  if (metrics->start(mc)) return true;
  spdlog::critical("metrics listener did not start (see the log above)");
  metrics.reset();
  return false;
}

// The pooler's listeners, cron, reload target and start-up callbacks. The
// metrics listener, if any, is bound already: on_ready writes the pid file,
// switches user, then says READY (process_setup.h).
pooler_settings pooler_settings_of(const config::config& cfg, reload_target reload, server_stats& stats) {
  pooler_settings ps;
  ps.listen = listen_addresses(cfg);
  ps.backlog = static_cast<int>(cfg.listen.backlog);
  ps.unix_mode = cfg.listen.unix_mode;
  ps.cron.grow = cfg.cache.hash_expand;
  ps.reload = reload;
  // What a reload re-reads besides the config: watched with it (config_watch.h).
  if (reload.auth) ps.watch_also = {reload.auth->ascii_path(), reload.auth->sasl_path()};
  if (!reload.cli->runtime_vars_file.empty()) ps.watch_also.push_back(reload.cli->runtime_vars_file);
  if (reload.tls) {
    for (const std::string* f : {&cfg.tls.chain_cert, &cfg.tls.key, &cfg.tls.ca_cert}) ps.watch_also.push_back(*f);
  }
  ps.on_tcp_port = [&stats](uint16_t port) { stats.set_tcp_port(port); };
  ps.stats_files = stats_files_settings_of(*reload.cli, cfg.server.workers);
  ps.stats = &stats;
  ps.on_ready = [&cfg] { return process_ready(cfg); };
  return ps;
}

// What runs, stopped and joined in the order their users need: the metrics
// machine before the workers whose counters it reads; the workers before the
// spool (it writes what they queued); the role monitor before the fan-out (it
// may be starting or stopping it); the slave last. Null ones are skipped.
void stop_machines(metrics_listener* metrics, const std::vector<worker*>& started, proxy::delete_spool* spool,
                   role_monitor* monitor, replication::fanout* repl_fanout, mm::machine* repl_slave) {
  if (metrics) {
    metrics->stop();
    metrics->join();
  }
  for (worker* w : started) w->stop();
  for (worker* w : started) w->join();
  if (spool) spool->stop();
  if (monitor) {
    monitor->stop();
    monitor->join();
  }
  if (repl_fanout) {
    repl_fanout->stop();
    repl_fanout->join();
  }
  if (repl_slave) {
    mm::machine_stop(repl_slave);
    mm::machine_join(repl_slave);
  }
}

}  // namespace

// The process from the first config to the last join: builds what every
// thread shares (store, replication, live snapshot, route tree, spool,
// stats), starts the machines in dependency order (spool, workers,
// fan-out, role, slave, metrics, pooler last: nothing is accepted before
// its consumers run), waits for the pooler to end (SIGTERM, `shutdown`, a
// listen failure), then stops and joins the metrics machine, the workers,
// the spool, role, fan-out and slave machines. Returns the exit code.
// [the main thread; it blocks in joins, which is fine for a thread that
// serves nothing] Long, but one straight line of start-up steps with no
// loop; each step is a call into the component that owns it, and the
// objects stay here, declared in the order their lifetimes need.
int instance_run(const config::config& cfg, const config::cli_options& cli) {
  // Every machine thread inherits this mask (main blocked these already,
  // before the logger thread); the pooler receives them.
  mm::signal_block({SIGHUP, SIGTERM, SIGINT, SIGUSR1});
  ::signal(SIGPIPE, SIG_IGN);

  std::shared_ptr<tls_context> tls;
  repl_tls rtls;
  if (!make_tls_contexts(cfg, tls, rtls)) return 1;
  // The password files outlive the workers that check them.
  auth_store auth;
  if (!open_auth(cfg, auth)) return 1;

  store::store_config sc = store_config_of(cfg);
  sc.memory_file_replace_in_use = cli.takeover;  // the old process still has the file
  std::unique_ptr<store::store> st;
  try {
    st = std::make_unique<store::store>(sc);
  } catch (const std::exception& e) {  // -e FILE that cannot be opened; memory that cannot be mapped
    spdlog::critical("the store cannot be made: {}", e.what());
    return 1;
  }
  if (!st->large_values_available()) {
    spdlog::error("cannot create the large values' file in {}: {}; values over {} bytes will be refused", sc.temp_dir,
                  std::strerror(errno), sc.large_value_threshold);
  }
  server_clock clock;
  if (!sc.memory_file.empty()) restore_memory_file(*st, sc.memory_file, clock);
  // `watch evictions`: outlives every thread that evicts (declared after the store,
  // it is destroyed first, but only once the workers and the cron have stopped).
  watch_evictions evictions_watch(clock);
  st->set_eviction_observer(&evictions_watch);
  mm::machine_config mc;
  mc.backend = backend_of(cfg.server.backend);
  mc.stack_size = cfg.server.stack_size;
  // 128 provided receive buffers of 16 KiB per machine (machinarium's default is 256): the
  // kernel fills them in ring order, so under pipelined input all of them end up resident,
  // and the store counts them against -m (below). 64 measured 5-10% slower on the pipelined
  // 100 B rows (the ring ran dry; re-arming waits for an eighth of it back); 128 measured
  // as fast as 256 (scripts/bench/run, 5 rounds of 2 s: 1.02, 0.95, 1.01).
  mc.uring_buffers = 128;
  // Replication: the fan-out machine and its observer, installed before any
  // worker can touch the store, on every node that is or may become a master
  // (a slave's store pays one relaxed load per change: nothing streams).
  const config::replication_role repl_role = cfg.replication.role;
  const bool auto_role = repl_role == config::replication_role::Auto;
  replication::repl_counters repl;
  // Every node that is or may become a master has the ack state (idle with
  // `ack: none`), so a SIGHUP can turn `ack: slave` on. It outlives the
  // fan-out (which a role change stops and starts again) and the workers.
  std::unique_ptr<replication::ack_state> repl_ack;
  std::unique_ptr<replication::fanout> repl_fanout;
  const std::string takeover_path = takeover_socket_path(cfg);
  if (repl_role == config::replication_role::Master || auto_role) {
    make_fanout(cfg, rtls, *st, clock, repl, repl_ack, repl_fanout);
  } else if (repl_role == config::replication_role::None && !takeover_path.empty()) {
    make_takeover_fanout(cfg, *st, clock, repl, repl_fanout);
  }
  // Roles by virtual IP: the first role is decided here, before the first
  // snapshot, so clients meet the right one from the start.
  first_role first = decide_first_role(cfg, mc, rtls, repl);
  // mcrouter's pool-stats groups: known before the first server is made
  // (each server finds its group once, backend_server.h).
  if (!cli.pool_stats_file.empty()) {
    std::vector<std::string> groups;
    std::string why;
    if (!config::read_pool_stats_file(cli.pool_stats_file, groups, &why)) {
      spdlog::critical("--pool-stats-config-file {}", why);
      return 1;
    }
    proxy::pool_groups_install(std::move(groups), cfg.server.workers);
  }
  // What a SIGHUP may change; the pooler publishes the next one (reload.h),
  // and so does a role change (served_role.h).
  proxy::server_directory servers(cfg.server.workers);
  std::shared_ptr<const live_settings> first_live = first_live_settings(cfg, cli, servers, first.access);
  if (!first_live) return 1;
  // --takeover: the running process's listeners (and, below, its store).
  // Any failure until this process serves exits 1; the old one serves on.
  takeover_handoff handoff;
  struct handoff_closer {
    takeover_handoff& h;
    ~handoff_closer() { takeover_close(h); }
  } closer{handoff};
  if (cli.takeover) {
    std::string why;
    if (!takeover_connect(takeover_path, cfg.takeover.timeout_ms, handoff, &why)) {
      spdlog::critical("takeover: {}; the running process serves on", why);
      return 1;
    }
    notify_as_new_main_pid();
  }
  for (const std::string& w : config::config_warnings(cfg)) spdlog::warn("{}", w);
  // memcached flags taken without memcached's effect (cli.h: notes).
  for (const std::string& n : cli.notes) spdlog::warn("{}", n);
  // The crawler switch starts as configured (-o no_lru_crawler); `lru_crawler
  // enable|disable` flips it from then on, and a reload leaves it alone.
  commands::crawler_enabled().store(cfg.cache.lru_crawler, std::memory_order_relaxed);
  live_cell live(std::move(first_live));
  std::unique_ptr<proxy::delete_spool> spool;
  // After a takeover, once the old process (and its spool machine) has gone.
  if (!cli.takeover && !start_spool(cfg, servers, mc, spool)) return 1;
  served_role role(first.access);
  std::unique_ptr<role_monitor> monitor;
  if (auto_role) {
    monitor = std::make_unique<role_monitor>(std::move(first.settings), first.state, *repl_fanout, *st, clock, repl,
                                             role, live);
  }

  conn_registry conns;
  gc_counters gc;

  // The backend is probed per machine; the stats report the workers'.
  server_stats stats(cfg, live, *st, conns, clock, gc, "pending");
  if (repl_role != config::replication_role::None) stats.set_replication(&repl);
  stats.set_tls(tls.get());
  std::vector<std::unique_ptr<worker>> workers;
  std::unique_ptr<pooler> pool;

  worker_shared shared;
  shared.store = st.get();
  shared.stats = &stats;
  shared.conns = &conns;
  shared.clock = &clock;
  shared.live = &live;
  shared.ack_state = repl_ack.get();
  shared.tls = tls.get();
  set_worker_settings(shared, cfg, auth);
  shared.request_shutdown = [&pool] {
    if (pool) pool->request_shutdown();
  };

  for (unsigned i = 0; i < cfg.server.workers; i++)
    workers.push_back(std::make_unique<worker>(static_cast<int>(i), shared, stats.add_worker()));
  std::vector<udp_socket> udp_all;
  std::vector<std::vector<udp_socket>> udp_later;
  if (!bind_udp(cfg, workers, cli.takeover ? &handoff : nullptr, udp_all, udp_later)) return 1;
  std::vector<worker*> started;
  int rc = start_workers(mc, workers, started) ? 0 : 1;
  // What the workers and the logger hold to serve counts against -m with the items: each
  // worker's receive ring (above) and the log queue. Under epoll the rings are not there:
  // counted anyway, so the limit does not depend on the backend the kernel allowed.
  st->set_reserved_bytes(uint64_t{cfg.server.workers} * mc.uring_buffers * mc.uring_buffer_size + log::queue_bytes());
  // After a takeover the old process holds the replication port until it
  // exits; with roles by virtual IP the role machine, which starts and stops
  // the fan-out from then on, starts after it too.
  const bool fanout_later = cli.takeover && first.start_fanout;
  const bool monitor_later = cli.takeover && monitor != nullptr;
  if (rc == 0 && first.start_fanout && !fanout_later && !repl_fanout->start(mc)) {
    spdlog::critical("fan-out machine did not start (see the log above)");
    rc = 1;
  }
  if (rc == 0 && monitor && !monitor_later && !monitor->start(mc)) {
    spdlog::critical("role machine did not start (see the log above)");
    rc = 1;
  }
  mm::machine* repl_slave = nullptr;
  if (rc == 0 && cfg.replication.role == config::replication_role::Slave) {
    repl_slave = start_slave(cfg, mc, rtls, *st, clock, repl);
    if (!repl_slave) rc = 1;
  }
  std::unique_ptr<metrics_listener> metrics;
  if (rc == 0) stats.set_io_backend(started.front()->backend_name());  // before any reader starts
  // After a takeover the old process holds the metrics port until it exits.
  if (rc == 0 && !cli.takeover && !start_metrics(cfg, stats, started, mc, metrics)) rc = 1;
  // A takeover keeps the listeners: each must be one the old process hands
  // over, since binding one after the old process stopped could fail with
  // nobody serving. Checked before READY, so a mismatch leaves it serving.
  std::vector<int> adopted;
  if (rc == 0 && cli.takeover) {
    const std::vector<listen_entry> entries = listen_addresses(cfg);
    for (size_t i = 0; i < entries.size(); i++) {
      adopted.push_back(takeover_take_listener(handoff, i, entries[i].address));
      if (adopted.back() < 0) {
        spdlog::critical(
            "takeover: the running process has no listener {} (#{}); a takeover keeps the listeners "
            "(change them with a restart)",
            entries[i].address, i);
        rc = 1;
      }
    }
    if (rc != 0) {
      for (int fd : adopted) {
        if (fd >= 0) ::close(fd);
      }
      adopted.clear();
    }
  }
  if (rc == 0 && cli.takeover) {
    // The store: the old process's initial sync and stream, until its end
    // mark, before this one accepts anything. Last: once the sync is done
    // the old process stops serving, so whatever may fail comes before.
    std::string why;
    if (!takeover_ready(handoff, &why) ||
        !takeover_receive_store(
            handoff, mc, cfg.takeover.timeout_ms, *st, [&clock] { return clock.now(); }, repl, &why)) {
      spdlog::critical("takeover: {}", why);
      rc = 1;
    }
  }
  if (rc == 0) {
    if (!cli.runtime_vars_file.empty()) runtime_vars_load(cli.runtime_vars_file);  // read again at each reload
    reload_target reload{&cli, &cfg, &live, st.get(), &servers, &role};
    reload.tls = tls.get();
    reload.auth = shared.auth != nullptr ? &auth : nullptr;
    pooler_settings ps = pooler_settings_of(cfg, reload, stats);
    ps.takeover_path = takeover_path;
    ps.udp = udp_all;
    ps.takeover.timeout_ms = cfg.takeover.timeout_ms;
    ps.takeover.machine = mc;
    // The store moves only from a node whose writes are its own.
    if (repl_role == config::replication_role::None || repl_role == config::replication_role::Master)
      ps.takeover.fanout = repl_fanout.get();
    ps.on_handed_over = [] { process_handed_over(); };
    ps.on_resumed = [] { process_resumed(); };
    if (cli.takeover) {
      ps.adopted = std::move(adopted);
      ps.takeover_listener_fd = handoff.takeover_listener;
      handoff.takeover_listener = -1;  // the pooler's now
      if (!handoff.takeover_path.empty() && handoff.takeover_path != takeover_path) {
        spdlog::warn("takeover: the old process's takeover socket was {}; this one's is {}", handoff.takeover_path,
                     takeover_path);
        ::close(ps.takeover_listener_fd);
        ps.takeover_listener_fd = -1;
      }
      // Serving: systemd's READY=1 with MAINPID (ready_notify.h), the UDP
      // sockets, then DONE: the old process exits.
      ps.on_ready = [&cfg, &handoff, &udp_later, &started] {
        if (!process_ready(cfg)) return false;
        // A test hook (tests/functional/test_takeover.py), not a setting:
        // ITHACA_TAKEOVER_FAULT=exit-before-done ends this process where its
        // failure hurts most: the old one stopped serving, the pid file and
        // systemd name this pid, and DONE was not sent.
        if (const char* fault = std::getenv("ITHACA_TAKEOVER_FAULT");
            fault != nullptr && std::string_view(fault) == "exit-before-done") {
          std::fprintf(stderr, "takeover: ITHACA_TAKEOVER_FAULT=exit-before-done: exiting before DONE\n");
          std::_Exit(70);
        }
        for (size_t w = 0; w < udp_later.size() && w < started.size(); w++) {
          for (const udp_socket& u : udp_later[w]) started[w]->serve_udp(u);
        }
        udp_later.clear();
        takeover_done(handoff);
        return true;
      };
    }
    pool = std::make_unique<pooler>(std::move(ps), started, conns, *st, clock, gc);
    spdlog::info("ithaca starting: {} workers, memory limit {} bytes, io backend {}", started.size(),
                 cfg.cache.memory_limit, started.front()->backend_name());
    if (!pool->start(mc)) {
      spdlog::critical("pooler machine did not start");
      rc = 1;
    } else {
      if (cli.takeover) {
        // What the old process held until its exit: the spool's files, the
        // replication port.
        wait_for_exit(handoff.old_pid, cfg.takeover.timeout_ms);
        if (!start_spool(cfg, servers, mc, spool)) {
          spdlog::critical("takeover: the spool did not start; deletes that fail are not spooled");
        }
        if (fanout_later) wait_port_free(fanout_settings_of(cfg, rtls).listen, cfg.takeover.timeout_ms);
        if (fanout_later && !repl_fanout->start(mc)) spdlog::critical("fan-out machine did not start (see above)");
        if (monitor_later && !monitor->start(mc)) spdlog::critical("role machine did not start (see above)");
        if (cfg.metrics.enabled) wait_port_free(config::to_string(cfg.metrics.listen), cfg.takeover.timeout_ms);
        if (!start_metrics(cfg, stats, started, mc, metrics))
          spdlog::critical("takeover: the metrics listener did not start (see above); serving without it");
      }
      pool->join();  // returns after shutdown (signal, `shutdown` command, or a listen failure)
      if (pool->failed()) rc = 1;
    }
  }
  stop_machines(metrics.get(), started, spool.get(), monitor.get(), repl_fanout.get(), repl_slave);
  if (pool && pool->stopped_by_usr1() && !sc.memory_file.empty()) save_memory_file(*st, sc.memory_file, clock);
  spdlog::info("ithaca stopped");
  return rc;
}

}  // namespace ithaca::server
