// The `stats` commands: memcached's field names, from the store's counters,
// every worker's command counters, the connection registry and the cron.
// collect() runs in a worker coroutine; it only reads relaxed counters and
// takes the registry's leaf lock for `stats conns`.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "config.h"
#include "conn_registry.h"
#include "counters.h"
#include "executor.h"
#include "live_settings.h"
#include "repl_counters.h"
#include "server_clock.h"
#include "store.h"

namespace ithaca::server {

class tls_context;

// Written by the cron coroutine, read by `stats`.
struct gc_counters {
  std::atomic<uint64_t> runs{0};
  std::atomic<uint64_t> last_ms{0};
  std::atomic<uint64_t> reclaimed{0};
  std::atomic<uint64_t> evictions{0};
  std::atomic<uint64_t> expired_unfetched{0};
  std::atomic<uint64_t> evicted_unfetched{0};
};

class server_stats final : public stats::stats_provider {
 public:
  // `cfg` is the start-up config; `live` overrides what a reload changed.
  server_stats(const config::config& cfg, const live_cell& live, store::store& st, conn_registry& conns,
               const server_clock& clock, gc_counters& gc, std::string io_backend);

  // One per worker, created before the workers start; never removed.
  stats::command_counters& add_worker();

  bool collect(std::string_view arg, stats::stat_lines& out) override;
  void reset() override;
  void set_verbosity(uint32_t level) override { verbosity_.store(level); }
  uint32_t verbosity() const override { return verbosity_.load(); }
  bool set_memory_limit(uint64_t bytes) override { return store_.set_memory_limit(bytes); }
  unsigned slab_class_largest() const override { return store_.classes().largest(); }
  // Called once, before the pooler starts accepting.
  void set_io_backend(std::string name) { io_backend_ = std::move(name); }
  // The port really bound (the config may say 0); any thread.
  void set_tcp_port(uint16_t port) { tcp_port_.store(port); }
  // Before the workers start, when replication is configured.
  void set_replication(const replication::repl_counters* c) { repl_ = c; }
  // Before the workers start, with TLS on (-Z): its counters in `stats`.
  void set_tls(tls_context* t) { tls_ = t; }
  bool refresh_certs(std::string& error) override;

 private:
  void general(const live_settings& live, stats::stat_lines& out);
  void mcrouter(const live_settings& live, stats::stat_lines& out);
  // Every worker's command counters summed, less the `stats reset` baseline.
  std::array<uint64_t, stats::command_counters::kCount> worker_sums();
  void settings(const live_settings& live, stats::stat_lines& out);
  void items(stats::stat_lines& out);
  void slabs(stats::stat_lines& out);
  void conns(stats::stat_lines& out);

  const config::config& cfg_;
  const live_cell& live_;
  store::store& store_;
  conn_registry& conns_;
  const server_clock& clock_;
  gc_counters& gc_;
  std::string io_backend_;
  std::vector<std::unique_ptr<stats::command_counters>> workers_;  // fixed after start
  std::atomic<uint32_t> verbosity_{0};
  const replication::repl_counters* repl_ = nullptr;
  tls_context* tls_ = nullptr;
  std::atomic<uint16_t> tcp_port_{0};  // 0: not bound yet, report the config's
  // `stats reset` keeps memcached's semantics by remembering a baseline per
  // counter rather than writing into counters other threads own.
  mutable std::mutex reset_mutex_;  // leaf lock except for the registry's (stats conns); guards the baselines
  store::store_stats_snapshot store_base_{};
  store::class_stats_snapshot class_base_{};
  std::vector<uint64_t> worker_base_;
  std::atomic<uint64_t> total_conns_base_{0};
  std::atomic<uint64_t> rejected_base_{0};
};

}  // namespace ithaca::server
