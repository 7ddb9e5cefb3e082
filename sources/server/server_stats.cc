#include "server_stats.h"

#include "router_stats.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <mutex>

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

server_stats::server_stats(const config::config& cfg, const live_cell& live, store::store& st,
                           conn_registry& conns, const server_clock& clock, gc_counters& gc,
                           std::string io_backend)
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
  if (arg.empty()) {
    general(*live, out);
    router_stats_summary(*live->routes, out);
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
  } else if (arg == "servers") {
    router_stats_servers(*live->routes, out);
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
  out = config::settings_stats(running);
  // What only the running server knows: the port bound, the backend chosen
  // (the config may say auto), whether stats detail is on, the class table
  // it started with (whatever item_size_max is now).
  const uint16_t port = tcp_port_.load();
  for (auto& [name, value] : out) {
    if (name == "tcpport" && port != 0) value = std::to_string(port);
    if (name == "io_backend") value = io_backend_;
    if (name == "proxy_uring_enabled" && value == "yes" && io_backend_ != "io_uring") value = "no";
    if (name == "detail_enabled") value = stats::prefix_stats::instance().enabled() ? "yes" : "no";
    if (name == "lru_crawler") value = commands::crawler_enabled().load(std::memory_order_relaxed) ? "yes" : "no";
    if (name == "slab_chunk_max") value = std::to_string(store_.classes().chunk_max());
  }
}

// The plain `stats` group: memcached's names from the store's counters, the
// sum of every worker's command counters and the connection registry, each
// minus its `stats reset` baseline, then ithaca's own (large values, UDP,
// leases, gc...). [a worker answering `stats`, or the metrics machine;
// under reset_mutex_ (collect()), which it holds while it takes the UDP drop
// registry's mutex (udp_kernel_drops)] Cost: one pass over the workers'
// counter blocks; no allocation beyond the output lines.
void server_stats::general(const live_settings& live, stats::stat_lines& out) {
  auto add = [&](const char* name, auto value) {
    if constexpr (std::is_convertible_v<decltype(value), std::string>) {
      out.emplace_back(name, std::string(value));
    } else {
      out.emplace_back(name, std::to_string(value));
    }
  };
  // Sum every worker's counters, minus the `stats reset` baseline.
  uint64_t sums[kCounters] = {};
  size_t w = 0;
  for (auto& c : workers_) {
    size_t i = 0;
    c->for_each([&](stats::counter& k) {
      sums[i] += k.get() - worker_base_[w * kCounters + i];
      i++;
    });
    w++;
  }
  // A worker counter's sum, by name (counters.h).
  auto sum = [&](stats::command_counter c) { return sums[static_cast<size_t>(c)]; };
  using cc = stats::command_counter;
  store::store_stats_snapshot s = store_.stats();
  const store::store_stats_snapshot& b = store_base_;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);

  add("pid", static_cast<int64_t>(getpid()));
  add("uptime", clock_.uptime_s());
  add("time", static_cast<int64_t>(std::time(nullptr)));
  add("version", std::string(commands::kVersion));
  add("pointer_size", static_cast<int>(sizeof(void*) * 8));
  add("rusage_user", timeval_text(ru.ru_utime));
  add("rusage_system", timeval_text(ru.ru_stime));
  add("max_connections", live.max_connections);
  add("curr_connections", conns_.current());
  add("total_connections", conns_.total() - total_conns_base_);
  add("rejected_connections", conns_.rejected.load() - rejected_base_);
  add("connection_structures", conns_.current());
  add("cmd_get", sum(cc::cmd_get));
  add("cmd_set", sum(cc::cmd_set));
  add("cmd_flush", sum(cc::cmd_flush));
  add("cmd_touch", sum(cc::cmd_touch));
  add("cmd_meta", sum(cc::cmd_meta));
  // Hits and misses: the local store's and, in the router role, what the
  // backends answered the routed requests (routed_counts.cc), so a memcached
  // dashboard reads the same figures in front of a pool.
  add("get_hits", s.get_hits - b.get_hits + sum(cc::routed_get_hits));
  add("get_misses", s.get_misses - b.get_misses + sum(cc::routed_get_misses));
  add("get_expired", s.get_expired - b.get_expired);
  add("get_flushed", s.get_flushed - b.get_flushed);
  add("delete_misses", s.delete_misses - b.delete_misses + sum(cc::routed_delete_misses));
  add("delete_hits", s.delete_hits - b.delete_hits + sum(cc::routed_delete_hits));
  add("incr_misses", s.incr_misses - b.incr_misses + sum(cc::routed_incr_misses));
  add("incr_hits", s.incr_hits - b.incr_hits + sum(cc::routed_incr_hits));
  add("decr_misses", s.decr_misses - b.decr_misses + sum(cc::routed_decr_misses));
  add("decr_hits", s.decr_hits - b.decr_hits + sum(cc::routed_decr_hits));
  add("cas_misses", s.cas_misses - b.cas_misses + sum(cc::routed_cas_misses));
  add("cas_hits", s.cas_hits - b.cas_hits + sum(cc::routed_cas_hits));
  add("cas_badval", s.cas_badval - b.cas_badval + sum(cc::routed_cas_badval));
  add("touch_hits", s.touch_hits - b.touch_hits + sum(cc::routed_touch_hits));
  add("touch_misses", s.touch_misses - b.touch_misses + sum(cc::routed_touch_misses));
  add("store_no_memory", s.out_of_memory - b.out_of_memory);
  add("auth_cmds", sum(cc::auth_cmds));
  add("auth_errors", sum(cc::auth_errors));
  if (live.idle_timeout_ms > 0) add("idle_kicks", sum(cc::idle_kicks));  // memcached: only with a timeout
  add("bytes_read", sum(cc::bytes_read));
  add("bytes_written", sum(cc::bytes_written));
  add("limit_maxbytes", store_.memory_limit());
  add("accepting_conns", 1);
  add("threads", cfg_.server.workers);
  add("conn_yields", sum(cc::conn_yields));
  const store::store::table_shape table = store_.table_now();
  add("hash_power_level", table.power);
  add("hash_bytes", table.bytes);
  add("hash_is_expanding", table.growing ? 1 : 0);
  // memcached's figure (ITEM_ntotal summed, items.c do_item_link); the memory charge the
  // limit bounds is `stats slabs` total_malloced (memcached's figure the limit bounds).
  add("bytes", store_.item_bytes());
  add("curr_items", s.curr_items);
  add("total_items", s.total_items - b.total_items);
  add("expired_unfetched", s.expired_unfetched - b.expired_unfetched);
  add("evicted_unfetched", s.evicted_unfetched - b.evicted_unfetched);
  add("evictions", s.evictions - b.evictions);
  add("reclaimed", s.reclaimed - b.reclaimed);
  // `watch` (flow/watch_hub.h), memcached's names: lines made, lines a full
  // watcher dropped, lines handed to watchers, watchers now. There is no
  // per-worker log buffer to overflow, so log_worker_dropped stays 0.
  const stats::watch::hub& wh = stats::watch::hub::instance();
  add("log_worker_dropped", 0);
  add("log_worker_written", wh.written());
  add("log_watcher_skipped", wh.skipped());
  add("log_watcher_sent", wh.sent());
  add("log_watchers", wh.watchers());
  // memcached's TLS counters, printed only with TLS on, as it does; then
  // ithaca's: handshakes done and those whose sends the kernel encrypts.
  if (tls_) {
    tls_counters& t = tls_->counters();
    if (tls_->config().session_cache) add("ssl_new_sessions", t.new_sessions.load());
    add("ssl_handshake_errors", t.handshake_errors.load());
    add("ssl_proto_errors", t.proto_errors.load());
    add("time_since_server_cert_refresh", tls_context::monotonic_s() - tls_->loaded_at_s());
    add("ssl_handshakes", t.handshakes.load());
    add("ssl_kernel_tls_connections", t.ktls_send.load());
  }
  // ithaca's own.
  add("gc_runs", gc_.runs.load());
  add("gc_last_ms", gc_.last_ms.load());
  add("io_backend", io_backend_);
  add("large_values", s.large_values);
  add("large_value_disk_bytes", store_.large_value_disk_used());
  add("large_value_disk_limit", store_.large_value_disk_limit());
  // Large values evicted by the GC sweep (disk above its high watermark) and by a
  // store that found the disk budget full (the sweep keeps that rare).
  add("large_value_gc_evictions", s.large_value_gc_evictions - b.large_value_gc_evictions);
  add("large_value_inline_evictions", s.large_value_inline_evictions - b.large_value_inline_evictions);
  add("lease_tokens_issued", s.lease_tokens - b.lease_tokens);
  add("lease_waits", s.lease_waits - b.lease_waits);
  add("lease_sets_refused", sum(cc::lease_sets_refused));
  add("protocol_errors", sum(cc::parse_errors));
  add("udp_requests", sum(cc::udp_requests));
  add("udp_dropped", sum(cc::udp_dropped));
  add("udp_kernel_drops", udp_kernel_drops());  // cumulative: the kernel's count, not reset
  add("verbosity", verbosity_.load());
  if (repl_) repl_stat_lines(*repl_, out);
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
