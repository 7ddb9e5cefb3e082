#include "server_stats.h"

#include "router_stats.h"
#include "mcrouter_servers.h"
#include "router_stats_table.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <mutex>

#include "failover_counts.h"
#include "general_stats.h"
#include "pool_group_stats.h"
#include "prefix_stats.h"
#include "repl_stats.h"
#include "settings_stats.h"
#include "slab_stats.h"
#include "reload.h"
#include "tls_context.h"
#include "udp_buffers.h"
#include "watch_hub.h"

namespace ithaca::server {

namespace {
constexpr size_t kCounters = stats::command_counters::kCount;

std::string timeval_text(const timeval& tv) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(tv.tv_sec), static_cast<long>(tv.tv_usec));
  return buf;
}
}  // namespace

server_stats::server_stats(const config::config& cfg, const live_cell& live, store::store& st, conn_registry& conns,
                           const server_clock& clock, gc_counters& gc, std::string io_backend)
    : cfg_(cfg), live_(live), store_(st), conns_(conns), clock_(clock), gc_(gc), io_backend_(std::move(io_backend)) {}

stats::command_counters& server_stats::add_worker() {
  workers_.push_back(std::make_unique<stats::command_counters>());
  worker_base_.resize(workers_.size() * kCounters, 0);
  return *workers_.back();
}

// memcached's refresh_certs: "OK", or its error text ("Error TLS not
// enabled" without -Z). Reads the files on the blocking pool; no lock held.
bool server_stats::refresh_certs(std::string& error) {
  if (!tls_) {
    error = "Error TLS not enabled";
    return false;
  }
  return tls_->refresh_from_coroutine(&error, kReloadReadTimeout);
}

bool server_stats::collect(std::string_view arg, stats::stat_lines& out) {
  // Taken before reset_mutex_, so the two locks are never held together.
  const std::shared_ptr<const live_settings> live = live_.load();
  std::lock_guard lock(reset_mutex_);
  if (arg.empty() || arg == "all") {
    // mcrouter's `stats all` is its every counter: here the same lines.
    general(*live, out);
    router_stats_summary(*live->routes, out);
    mcrouter(*live, out);
    // mcrouter's --pool-stats-config-file groups (none: no lines).
    proxy::pool_group_stat_lines(out);
  } else if (arg == "suspect_servers") {
    router_stats_suspect(*live->routes, out);
  } else if (arg == "settings") {
    settings(*live, out);
  } else if (arg == "items") {
    items(out);
  } else if (arg == "slabs") {
    slabs(out);
  } else if (arg == "sizes") {
    // memcached without -o track_sizes (its default): no histogram of item sizes.
    out.emplace_back("sizes_status", "disabled");
  } else if (arg == "conns") {
    conns(out);
  } else if (arg == "pools") {
    router_stats_pools(*live->routes, out);
  } else if (arg == "servers" || arg == "ithaca_servers") {
    // ithaca's POOL/ADDRESS:FIELD lines; an mcrouter config's `stats
    // servers` asks for mcrouter_servers (commands/stats_command.cc), and
    // ithaca_servers gives these to any config.
    router_stats_servers(*live->routes, out);
  } else if (arg == "mcrouter_servers") {
    mcrouter_stats_servers(*live->routes, out);
  } else if (arg == "routes") {
    router_stats_routes(*live->routes, out);
  } else if (arg == "latency") {
    router_stats_latency(*live->routes, out);
  } else {
    return false;
  }
  return true;
}

void server_stats::reset() {
  // Taken before reset_mutex_, as in collect().
  const std::shared_ptr<const live_settings> live = live_.load();
  std::lock_guard lock(reset_mutex_);
  router_stats_reset(*live->routes);
  stats::failover_counts::instance().reset();
  store_base_ = store_.stats();
  class_base_ = store_.class_stats_now();
  size_t w = 0;
  for (auto& c : workers_) {
    size_t i = 0;
    c->for_each([&](stats::counter& k) { worker_base_[w * kCounters + i++] = k.get(); });
    w++;
  }
  total_conns_base_ = conns_.total();
  rejected_base_ = conns_.rejected.load();
}

// The running configuration: the start-up one with the live settings over it,
// and the store's memory limit (which `cache_memlimit` may have set since).
void server_stats::settings(const live_settings& live, stats::stat_lines& out) {
  config::config running = cfg_;
  overlay(live, running);
  running.cache.memory_limit = store_.memory_limit();
  // What only the running server knows: the port bound, the backend chosen
  // (the config may say auto), whether stats detail and the crawler are on,
  // the class table it started with (whatever item_size_max is now).
  config::settings_facts f = config::configured_facts(running);
  const uint16_t port = tcp_port_.load();
  if (port != 0) f.tcp_port = port;
  f.io_backend = io_backend_;
  f.uring_running = io_backend_ == "io_uring";
  f.detail_enabled = stats::prefix_stats::instance().enabled();
  f.lru_crawler = commands::crawler_enabled().load(std::memory_order_relaxed);
  f.slab_chunk_max = store_.classes().chunk_max();
  out = config::settings_stats(running, f);
}

// The plain `stats` group: the rows of stats/general_stats.h (memcached's
// names from the store's counters, the sum of every worker's command counters
// and the connection registry, each minus its `stats reset` baseline, then
// ithaca's own), then replication's and the router's. [a worker answering
// `stats`, or the metrics machine; under reset_mutex_ (collect()), which it
// holds while it takes the UDP drop registry's mutex (udp_kernel_drops)]
// Cost: one pass over the workers' counter blocks; no allocation beyond the
// output lines.
std::array<uint64_t, stats::command_counters::kCount> server_stats::worker_sums() {
  std::array<uint64_t, kCounters> sums{};
  size_t w = 0;
  for (auto& c : workers_) {
    size_t i = 0;
    c->for_each([&](stats::counter& k) {
      sums[i] += k.get() - worker_base_[w * kCounters + i];
      i++;
    });
    w++;
  }
  return sums;
}

void server_stats::general(const live_settings& live, stats::stat_lines& out) {
  // Sum every worker's counters, minus the `stats reset` baseline.
  const std::array<uint64_t, kCounters> sums = worker_sums();
  // A worker counter's sum, by name (counters.h).
  auto sum = [&](stats::command_counter c) { return sums[static_cast<size_t>(c)]; };
  using cc = stats::command_counter;
  store::store_stats_snapshot s = store_.stats();
  const store::store_stats_snapshot& b = store_base_;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);

  const store::store::table_shape table = store_.table_now();
  const stats::watch::hub& wh = stats::watch::hub::instance();
  // One line per row whose condition holds, in the table's (memcached's) order.
#define ITHACA_X(name, type, prom, help, page, labels, when, read) \
  if (when) stats::add_stat(out, name, read);
  ITHACA_GENERAL_STATS(ITHACA_X)
#undef ITHACA_X
  if (repl_) repl_stat_lines(*repl_, out);
}

// mcrouter's counters (router_stats_table.h: ITHACA_MCROUTER_STATS), after
// the router summary. [as general()]
void server_stats::mcrouter(const live_settings& live, stats::stat_lines& out) {
  const std::array<uint64_t, kCounters> sums = worker_sums();
  auto sum = [&](stats::command_counter c) { return sums[static_cast<size_t>(c)]; };
  using cc = stats::command_counter;
  const mcrouter_figures f = router_mcrouter_figures(*live.routes);
  const stats::failover_counts& fo = stats::failover_counts::instance();
  using stats::load;
#define ITHACA_X(name, type, prom, help, page, labels, when, read) \
  if (when) stats::add_stat(out, name, read);
  ITHACA_MCROUTER_STATS(ITHACA_X)
#undef ITHACA_X
}

// Per memcached size class: see slab_stats.h.
void server_stats::items(stats::stat_lines& out) {
  item_stat_lines(store_.class_stats_now(), class_base_, store::server_sec(clock_.now()), out);
}

void server_stats::slabs(stats::stat_lines& out) {
  slab_stat_lines(store_.classes(), store_.class_stats_now(), class_base_, store_.mem_used(), out);
}

void server_stats::conns(stats::stat_lines& out) {
  int64_t now = clock_.uptime_s();
  conns_.for_each([&](uint64_t id, const conn_info& c) {
    std::string prefix = std::to_string(id) + ":";
    out.emplace_back(prefix + "addr", c.address);
    out.emplace_back(prefix + "listen_addr", c.listener);
    out.emplace_back(prefix + "state", "conn_parse_cmd");
    out.emplace_back(prefix + "secs_since_last_cmd", std::to_string(now - c.since_s));
  });
}

}  // namespace ithaca::server
