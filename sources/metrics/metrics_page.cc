#include "metrics_page.h"

#include <cstdlib>
#include <map>
#include <string_view>

#include "prom_writer.h"

namespace ithaca::metrics {

namespace {

using lookup = std::map<std::string, std::string, std::less<>>;

lookup to_map(const stat_lines& lines) {
  lookup m;
  for (const auto& [k, v] : lines) m.emplace(k, v);
  return m;
}

// A stat's value as a number: false if absent or not a number.
bool number(const lookup& m, std::string_view key, double& out) {
  auto it = m.find(key);
  if (it == m.end() || it->second.empty()) return false;
  char* end = nullptr;
  out = std::strtod(it->second.c_str(), &end);
  return end != nullptr && *end == '\0';
}

// A one-to-one figure: stat `key` as family `name` (no labels), if present.
struct simple_figure {
  const char* key;
  const char* name;
  metric_type type;
  const char* help;
};

void add_figures(prom_writer& w, const lookup& m, std::initializer_list<simple_figure> figures,
                 const labels& l = {}) {
  for (const simple_figure& f : figures) {
    double v = 0;
    if (number(m, f.key, v)) w.add(f.name, f.type, f.help, l, v);
  }
}

constexpr auto C = metric_type::Counter;
constexpr auto G = metric_type::Gauge;

// ---------------------------------------------------------------- memcached_*

void memcached_general(prom_writer& w, const lookup& s) {
  w.add("memcached_up", G, "Could the memcached server be reached.", {}, 1);
  double v = 0;
  if (number(s, "uptime", v)) w.add("memcached_uptime_seconds", C, "Number of seconds since the server started.", {}, v);
  if (number(s, "time", v)) w.add("memcached_time_seconds", G, "current UNIX time according to the server.", {}, v);
  if (auto it = s.find("version"); it != s.end()) {
    w.add("memcached_version", G, "The version of this memcached server.", {{"version", it->second}}, 1);
  }
  add_figures(w, s, {
      {"rusage_user", "memcached_process_user_cpu_seconds_total", C, "Accumulated user time for this process."},
      {"rusage_system", "memcached_process_system_cpu_seconds_total", C, "Accumulated system time for this process."},
      {"bytes_read", "memcached_read_bytes_total", C, "Total number of bytes read by this server from network."},
      {"bytes_written", "memcached_written_bytes_total", C, "Total number of bytes sent by this server to network."},
      {"curr_connections", "memcached_current_connections", G, "Current number of open connections."},
      {"total_connections", "memcached_connections_total", C,
       "Total number of connections opened since the server started running."},
      {"rejected_connections", "memcached_connections_rejected_total", C,
       "Total number of connections rejected due to hitting the memcached's -c limit in maxconns_fast mode."},
      {"bytes", "memcached_current_bytes", G, "Current number of bytes used to store items."},
      {"limit_maxbytes", "memcached_limit_bytes", G, "Number of bytes this server is allowed to use for storage."},
      {"curr_items", "memcached_current_items", G, "Current number of items stored by this instance."},
      {"total_items", "memcached_items_total", C, "Total number of items stored during the life of this instance."},
      {"evictions", "memcached_items_evicted_total", C,
       "Total number of valid items removed from cache to free memory for new items."},
      {"reclaimed", "memcached_items_reclaimed_total", C,
       "Total number of times an entry was stored using memory from an expired entry."},
      {"store_no_memory", "memcached_item_no_memory_total", C,
       "The number of times an item could not be stored due to no more memory."},
      {"accepting_conns", "memcached_accepting_connections", G,
       "The Memcached server is currently accepting new connections."},
  });
  // Commands by status, memcached_exporter's way.
  const char* kHelp = "Total number of all requests broken down by command (get, set, etc.) and status.";
  for (const char* op : {"get", "delete", "incr", "decr", "cas", "touch"}) {
    const std::string o(op);
    if (number(s, o + "_hits", v)) w.add("memcached_commands_total", C, kHelp, {{"command", o}, {"status", "hit"}}, v);
    if (number(s, o + "_misses", v)) w.add("memcached_commands_total", C, kHelp, {{"command", o}, {"status", "miss"}}, v);
  }
  if (number(s, "cas_badval", v)) w.add("memcached_commands_total", C, kHelp, {{"command", "cas"}, {"status", "badval"}}, v);
  if (number(s, "cmd_flush", v)) w.add("memcached_commands_total", C, kHelp, {{"command", "flush"}, {"status", "hit"}}, v);
  // cmd_set counts cas commands too (as memcached's does); the exporter
  // subtracts them.
  double set = 0, cas_hits = 0, cas_misses = 0, cas_badval = 0;
  if (number(s, "cmd_set", set) && number(s, "cas_hits", cas_hits) && number(s, "cas_misses", cas_misses) &&
      number(s, "cas_badval", cas_badval)) {
    const double sets = set - cas_hits - cas_misses - cas_badval;
    w.add("memcached_commands_total", C, kHelp, {{"command", "set"}, {"status", "hit"}}, sets > 0 ? sets : 0);
  }
}

void memcached_settings(prom_writer& w, const lookup& settings) {
  add_figures(w, settings, {{"maxconns", "memcached_max_connections", G, "Maximum number of clients allowed."}});
}

// `stats items`: items:CLASS:FIELD. ithaca reports its one item pool as class 1.
void memcached_items(prom_writer& w, const stat_lines& items) {
  struct slab_figure {
    const char* field;
    const char* name;
    metric_type type;
    const char* help;
  };
  static const slab_figure kFigures[] = {
      {"number", "memcached_slab_current_items", G, "Number of items currently stored in this slab class."},
      {"evicted", "memcached_slab_items_evicted_total", C,
       "Total number of times an item had to be evicted from the LRU before it expired."},
      {"evicted_unfetched", "memcached_slab_items_evicted_unfetched_total", C,
       "Total nmber of items evicted and never fetched."},
      {"expired_unfetched", "memcached_slab_items_expired_unfetched_total", C,
       "Total number of valid items evicted from the LRU which were never touched after being set."},
      {"outofmemory", "memcached_slab_items_outofmemory_total", C,
       "Total number of items for this slab class that have triggered an out of memory error."},
      {"reclaimed", "memcached_slab_items_reclaimed_total", C, "Total number of items reclaimed."},
  };
  for (const auto& [key, value] : items) {
    // items:1:number
    if (key.rfind("items:", 0) != 0) continue;
    const size_t colon = key.find(':', 6);
    if (colon == std::string::npos) continue;
    const std::string slab = key.substr(6, colon - 6);
    const std::string_view field = std::string_view(key).substr(colon + 1);
    for (const slab_figure& f : kFigures) {
      if (field != f.field) continue;
      char* end = nullptr;
      const double v = std::strtod(value.c_str(), &end);
      if (end != nullptr && *end == '\0') w.add(f.name, f.type, f.help, {{"slab", slab}}, v);
    }
  }
}

void memcached_slabs(prom_writer& w, const lookup& slabs) {
  add_figures(w, slabs,
              {{"total_malloced", "memcached_malloced_bytes", G, "Number of bytes of memory allocated to slab pages."}});
}

// ---------------------------------------------------------------- ithaca_*

void ithaca_general(prom_writer& w, const lookup& s) {
  if (auto it = s.find("io_backend"); it != s.end()) {
    w.add("ithaca_io_backend", G, "The kernel interface the workers use (io_uring or epoll).", {{"backend", it->second}}, 1);
  }
  add_figures(w, s, {
      {"get_expired", "ithaca_get_expired_total", C, "Gets that found an expired item."},
      {"get_flushed", "ithaca_get_flushed_total", C, "Gets that found an item invalidated by flush_all."},
      {"cmd_touch", "ithaca_touch_commands_total", C, "Touch commands."},
      {"cmd_meta", "ithaca_meta_commands_total", C, "Meta protocol commands."},
      {"gc_runs", "ithaca_gc_runs_total", C, "Runs of the cron GC sweep."},
      {"large_values", "ithaca_large_values", G, "Items whose value lives in the large values' file."},
      {"large_value_disk_bytes", "ithaca_large_value_disk_bytes", G, "Bytes the large values use on disk."},
      {"large_value_disk_limit", "ithaca_large_value_disk_limit_bytes", G, "The large values' disk budget."},
      {"large_value_gc_evictions", "ithaca_large_value_gc_evictions_total", C,
       "Large values evicted by the GC sweep (disk above its high watermark)."},
      {"large_value_inline_evictions", "ithaca_large_value_inline_evictions_total", C,
       "Large values evicted by a store that found the disk budget full."},
      {"lease_tokens_issued", "ithaca_lease_tokens_issued_total", C, "Lease tokens handed out on misses."},
      {"lease_waits", "ithaca_lease_waits_total", C, "Readers told to wait for a hot key's lease."},
      {"lease_sets_refused", "ithaca_lease_sets_refused_total", C, "Sets refused for a stale lease token."},
      {"protocol_errors", "ithaca_protocol_errors_total", C, "Requests that did not parse."},
      {"udp_requests", "ithaca_udp_requests_total", C, "UDP requests served."},
      {"udp_dropped", "ithaca_udp_dropped_total", C, "UDP requests dropped (malformed or over a bound)."},
      {"udp_kernel_drops", "ithaca_udp_kernel_drops_total", C, "Datagrams the kernel dropped on the UDP sockets."},
  });
  double v = 0;
  if (number(s, "gc_last_ms", v)) w.add("ithaca_gc_last_duration_seconds", G, "Duration of the last GC sweep.", {}, v / 1000);
}

void ithaca_replication(prom_writer& w, const lookup& s) {
  auto role = s.find("repl_role");
  if (role == s.end()) return;  // replication not configured
  w.add("ithaca_replication_role", G, "The replication role now (1 for the current one).", {{"role", role->second}}, 1);
  add_figures(w, s, {
      {"repl_role_changes", "ithaca_replication_role_changes_total", C, "Role changes (virtual IP)."},
      {"repl_slaves", "ithaca_replication_slaves", G, "Slaves connected to this master."},
      {"repl_slaves_joined", "ithaca_replication_slaves_joined_total", C, "Slaves that registered."},
      {"repl_slaves_dropped", "ithaca_replication_slaves_dropped_total", C,
       "Slaves dropped (silent, too far behind, or gone)."},
      {"repl_syncs_done", "ithaca_replication_syncs_done_total", C, "Initial syncs completed."},
      {"repl_sync_items", "ithaca_replication_sync_items_total", C, "Items sent by initial syncs."},
      {"repl_records_sent", "ithaca_replication_records_sent_total", C, "Change records sent to slaves."},
      {"repl_bytes_sent", "ithaca_replication_sent_bytes_total", C, "Bytes sent to slaves."},
      {"repl_lag_bytes", "ithaca_replication_lag_bytes", G, "Bytes queued for the slowest slave."},
      {"repl_queue_overflows", "ithaca_replication_queue_overflows_total", C,
       "Records dropped because the workers' hand-off ring was full."},
      {"repl_peers_refused", "ithaca_replication_peers_refused_total", C, "Would-be slaves refused by replication.allow."},
      {"repl_master_connects", "ithaca_replication_master_connects_total", C, "Connections a slave made to its master."},
      {"repl_master_timeouts", "ithaca_replication_master_timeouts_total", C, "Masters a slave gave up as silent."},
      {"repl_stream_errors", "ithaca_replication_stream_errors_total", C, "Malformed records a slave received."},
      {"repl_ack_requests", "ithaca_replication_ack_requests_total", C, "Writes that asked for a slave's ack (ack: slave)."},
      {"repl_ack_waits", "ithaca_replication_ack_waits_total", C, "Writes that waited for a slave's ack."},
      {"repl_ack_confirmed", "ithaca_replication_ack_confirmed_total", C, "Writes a slave confirmed."},
      {"repl_ack_timeouts", "ithaca_replication_ack_timeouts_total", C, "Writes whose ack wait timed out."},
      {"repl_ack_unreplicated", "ithaca_replication_ack_unreplicated_total", C,
       "Writes answered with no slave to confirm them."},
  });
  const char* kApplied = "Changes a slave applied, by kind.";
  double v = 0;
  if (number(s, "repl_updated", v)) w.add("ithaca_replication_applied_total", C, kApplied, {{"op", "set"}}, v);
  if (number(s, "repl_touched", v)) w.add("ithaca_replication_applied_total", C, kApplied, {{"op", "touch"}}, v);
  if (number(s, "repl_removed", v)) w.add("ithaca_replication_applied_total", C, kApplied, {{"op", "delete"}}, v);
  if (number(s, "repl_ack_latency_max_us", v)) {
    w.add("ithaca_replication_ack_latency_max_seconds", G, "The longest ack wait confirmed.", {}, v / 1e6);
  }
}

// Pool names come from `stats pools` ("POOL:servers"); a server line is
// "POOL/ADDRESS:field". Names may hold '/' or ':', so the pool is the longest
// known name followed by '/', and the field is after the last ':'.
struct server_key {
  std::string pool;
  std::string server;
  std::string field;
};

bool split_server_key(const std::vector<std::string>& pools, const std::string& key, server_key& out) {
  const size_t colon = key.rfind(':');
  if (colon == std::string::npos) return false;
  const std::string* best = nullptr;
  for (const std::string& p : pools) {
    if (key.size() > p.size() + 1 && key.compare(0, p.size(), p) == 0 && key[p.size()] == '/' &&
        p.size() + 1 < colon && (best == nullptr || p.size() > best->size())) {
      best = &p;
    }
  }
  if (best == nullptr) return false;
  out.pool = *best;
  out.server = key.substr(best->size() + 1, colon - best->size() - 1);
  out.field = key.substr(colon + 1);
  return true;
}

std::vector<std::string> pool_names(const stat_lines& pools) {
  std::vector<std::string> out;
  constexpr std::string_view kSuffix = ":servers";
  for (const auto& [key, value] : pools) {
    if (key.size() > kSuffix.size() && key.compare(key.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0) {
      out.push_back(key.substr(0, key.size() - kSuffix.size()));
    }
  }
  return out;
}

bool to_number(const std::string& text, double& out) {
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && end != nullptr && *end == '\0';
}

void ithaca_pools(prom_writer& w, const stat_lines& pools, const std::vector<std::string>& names) {
  struct pool_figure {
    const char* field;
    const char* name;
    metric_type type;
    const char* help;
  };
  static const pool_figure kFigures[] = {
      {"servers", "ithaca_pool_servers", G, "Servers in the pool."},
      {"servers_up", "ithaca_pool_servers_up", G, "Servers of the pool marked up."},
      {"requests", "ithaca_pool_requests_total", C, "Requests sent to the pool's servers."},
      {"replies", "ithaca_pool_replies_total", C, "Replies from the pool's servers."},
      {"failures", "ithaca_pool_failures_total", C, "Requests to the pool's servers that failed."},
  };
  for (const std::string& pool : names) {
    for (const pool_figure& f : kFigures) {
      const std::string key = pool + ":" + f.field;
      for (const auto& [k, value] : pools) {
        double v = 0;
        if (k == key && to_number(value, v)) w.add(f.name, f.type, f.help, {{"pool", pool}}, v);
      }
    }
  }
}

void ithaca_servers(prom_writer& w, const stat_lines& servers, const std::vector<std::string>& names) {
  struct server_figure {
    const char* field;
    const char* name;
    metric_type type;
    const char* help;
  };
  static const server_figure kFigures[] = {
      {"transitions", "ithaca_server_transitions_total", C, "Up/down transitions of the server."},
      {"requests", "ithaca_server_requests_total", C, "Requests sent to the server."},
      {"replies", "ithaca_server_replies_total", C, "Replies from the server."},
      {"inflight", "ithaca_server_inflight", G, "Requests sent and not yet answered."},
      {"connections", "ithaca_server_connections", G, "Open connections to the server (all workers)."},
      {"connects", "ithaca_server_connects_total", C, "Connections opened to the server."},
      {"joined_gets", "ithaca_server_joined_gets_total", C, "Gets that joined another's get line."},
      {"idle_closes", "ithaca_server_idle_closes_total", C, "Idle connections the server closed."},
  };
  const char* kFailures = "Requests to the server that failed, by kind.";
  for (const auto& [key, value] : servers) {
    server_key k;
    if (!split_server_key(names, key, k)) continue;
    const labels l{{"pool", k.pool}, {"server", k.server}};
    if (k.field == "state") {
      w.add("ithaca_server_up", G, "1 if the server is marked up, 0 if down (failing fast, probed).", l,
            value == "up" ? 1 : 0);
      continue;
    }
    double v = 0;
    if (!to_number(value, v)) continue;
    if (k.field.rfind("failures_", 0) == 0) {
      labels lk = l;
      lk.emplace_back("kind", k.field.substr(9));
      w.add("ithaca_server_failures_total", C, kFailures, lk, v);
      continue;
    }
    for (const server_figure& f : kFigures) {
      if (k.field == f.field) w.add(f.name, f.type, f.help, l, v);
    }
  }
}

// `stats latency`: per server the cumulative count at each bound (us), the
// sum (us) and the count; summed per pool as well.
struct histogram_acc {
  std::map<uint64_t, uint64_t> cumulative;  // bound us -> count
  double sum_us = 0;
  uint64_t count = 0;
};

void add_histogram(prom_writer& w, const char* name, const char* help, const labels& l, const histogram_acc& h) {
  std::vector<std::pair<double, uint64_t>> buckets;
  for (const auto& [bound, n] : h.cumulative) buckets.emplace_back(static_cast<double>(bound) / 1e6, n);
  w.histogram(name, help, l, buckets, h.sum_us / 1e6, h.count);
}

void ithaca_latency(prom_writer& w, const stat_lines& latency, const std::vector<std::string>& names) {
  std::vector<std::pair<server_key, histogram_acc>> servers;  // in the order they come
  std::map<std::string, histogram_acc> pools;
  for (const auto& [key, value] : latency) {
    server_key k;
    double v = 0;
    if (!split_server_key(names, key, k) || !to_number(value, v)) continue;
    if (servers.empty() || servers.back().first.pool != k.pool || servers.back().first.server != k.server) {
      servers.emplace_back(k, histogram_acc{});
    }
    histogram_acc& h = servers.back().second;
    histogram_acc& p = pools[k.pool];
    if (k.field.rfind("latency_le_", 0) == 0) {
      const uint64_t bound = std::strtoull(k.field.c_str() + 11, nullptr, 10);
      h.cumulative[bound] += static_cast<uint64_t>(v);
      p.cumulative[bound] += static_cast<uint64_t>(v);
    } else if (k.field == "latency_sum_us") {
      h.sum_us += v;
      p.sum_us += v;
    } else if (k.field == "latency_count") {
      h.count += static_cast<uint64_t>(v);
      p.count += static_cast<uint64_t>(v);
    }
  }
  for (const auto& [k, h] : servers) {
    add_histogram(w, "ithaca_server_latency_seconds",
                  "Time from sending a request to the server to its reply (failures not counted).",
                  {{"pool", k.pool}, {"server", k.server}}, h);
  }
  for (const std::string& pool : names) {
    auto it = pools.find(pool);
    if (it == pools.end()) continue;
    add_histogram(w, "ithaca_pool_latency_seconds", "The latency of the pool's servers together.", {{"pool", pool}},
                  it->second);
  }
}

void ithaca_runtime(prom_writer& w, const std::vector<worker_runtime>& workers) {
  for (size_t i = 0; i < workers.size(); ++i) {
    const worker_runtime& r = workers[i];
    const labels l{{"worker", std::to_string(i)}};
    auto d = [](uint64_t v) { return static_cast<double>(v); };
    w.add("ithaca_worker_coroutines", G, "Coroutines alive on the worker machine.", l, d(r.coroutines));
    w.add("ithaca_worker_coroutines_created_total", C, "Coroutines created on the worker machine.", l,
          d(r.coroutines_created));
    w.add("ithaca_worker_ready_coroutines", G, "Coroutines ready to run after the machine's last turn.", l, d(r.ready));
    w.add("ithaca_worker_context_switches_total", C, "Switches into coroutines.", l, d(r.context_switches));
    w.add("ithaca_worker_loop_iterations_total", C, "Turns of the machine's event loop.", l, d(r.loop_iterations));
    w.add("ithaca_worker_messages_total", C, "Cross-machine wake-ups and spawns delivered.", l, d(r.messages));
    w.add("ithaca_worker_timers", G, "Timers pending.", l, d(r.timers));
    w.add("ithaca_worker_stacks_cached", G, "Coroutine stacks kept for reuse.", l, d(r.stacks_cached));
    if (r.uring) {
      w.add("ithaca_worker_uring_submissions_total", C, "io_uring submission queue entries submitted.", l,
            d(r.uring_submissions));
      w.add("ithaca_worker_uring_completions_total", C, "io_uring completions reaped.", l, d(r.uring_completions));
    }
  }
}

}  // namespace

std::string render_page(const page_input& in) {
  prom_writer w;
  const lookup general = to_map(in.general);
  memcached_general(w, general);
  memcached_settings(w, to_map(in.settings));
  memcached_items(w, in.items);
  memcached_slabs(w, to_map(in.slabs));
  ithaca_general(w, general);
  ithaca_replication(w, general);
  const std::vector<std::string> pools = pool_names(in.pools);
  ithaca_pools(w, in.pools, pools);
  ithaca_servers(w, in.servers, pools);
  ithaca_latency(w, in.latency, pools);
  ithaca_runtime(w, in.workers);
  return w.render();
}

}  // namespace ithaca::metrics
