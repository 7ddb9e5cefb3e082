// One backend server of one pool, shared by every worker: its address and
// settings (immutable), its health (up/down, consecutive failures: atomics any
// worker updates) and its counters (one block per worker, single writer).
//
// Identity: a pool's server is found again at reload by (pool name, address,
// settings), so a reload that keeps a server keeps its health, its counters
// and every worker's open connections to it (server_directory.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "counters.h"
#include "latency_histogram.h"
#include "smoothed_latency.h"
#include "machinarium.h"
#include "router_config.h"
#include "server_totals.h"

struct ssl_ctx_st;

namespace ithaca::proxy {

// What a pool says about talking to its servers (copied from config::pool_config).
struct server_settings {
  kinds::backend_protocol protocol = kinds::backend_protocol::Auto;
  uint64_t connect_timeout_ms = 1000;
  uint64_t timeout_ms = 1000;
  uint64_t late_reply_timeout_ms = 60000;  // backend_conn.h: the bound on a timed-out request's late reply
  unsigned connections = 1;
  unsigned max_inflight = 4096;
  unsigned max_queued = 65536;
  unsigned max_shadow_requests = 0;  // shadow copies outstanding per worker; 0: no bound
  unsigned failure_limit = 3;
  uint64_t retry_interval_ms = 500;
  uint64_t retry_interval_max_ms = 10000;
  bool preconnect = false;  // twemproxy's preconnect: each worker connects at start-up
  config::backend_tls tls;  // the pool's effective TLS settings (a change: new connections)
  bool operator==(const server_settings&) const = default;
};

// Bumped on every up/down transition of any server: a worker's cached
// distribution over the live servers (auto_eject_hosts) is rebuilt when it
// moved. [any thread]
uint64_t health_epoch();

// Why a request to a server failed (one counter each).
enum class failure_kind : uint8_t {
  Down,        // the server is marked down: failed at once (fail fast)
  Timeout,     // no reply within the pool's timeout
  Connect,     // connect refused or timed out
  Connection,  // reset, closed, or another request's failure broke the connection
  BadReply,    // the server sent garbage
  QueueFull,   // more requests waiting than max_queued
  ShadowFull,  // a shadow copy past max_shadow_requests: dropped, not sent
};
const char* to_string(failure_kind f);

// One worker's counters for one server. [single writer: that worker]
struct server_counters {
  stats::counter requests;                              // backend calls started
  stats::counter replies;                               // calls answered
  stats::counter results[protocol::kReplyResultCount];  // what the answers said (reply_result.h)
  stats::counter failures[kFailureKindCount];           // by failure_kind
  stats::counter connects;                              // connections opened
  stats::counter joined;                                // gets that joined another's get line (one reply for both)
  stats::counter idle_closes;                           // idle connections the server closed (recycled, not failures)
  stats::counter late_replies;                          // replies read after their request timed out, dropped
  stats::counter late_closes;                           // connections closed for timed-out requests' replies not coming
  std::atomic<int64_t> inflight{0};                     // calls sent and unanswered (gauge)
  std::atomic<int64_t> pending{0};                      // calls queued, not yet sent (gauge: gauged_queue.h)
  smoothed_latency recent_latency;                      // replies' latency, mcrouter's smoothing
  std::atomic<int64_t> shadow_outstanding{0};           // shadow copies submitted and not done (gauge)
  std::atomic<int64_t> connections{0};                  // open connections (gauge)
  latency_histogram latency;
};

// A server's reliable deletes (delete_spool.h): deletes it could not take,
// kept on disk and replayed when it is back. Relaxed atomics: workers add
// spooled/dropped and reserve bytes, the spool machine adds replayed and
// gives bytes back, `stats` reads. Never reset (a reset would break the
// bytes' bound).
struct spool_counts {
  std::atomic<uint64_t> spooled{0};   // deletes appended to the spool
  std::atomic<uint64_t> replayed{0};  // deletes the server took on replay
  std::atomic<uint64_t> dropped{0};   // deletes not spooled: over the bound (or no spool)
  std::atomic<uint64_t> bytes{0};     // spooled and not yet replayed (the bound's measure)
};

class backend_server {
 public:
  // `tls_ctx`: the pool's OpenSSL client context when settings.tls is on
  // (net/tls_setup.h), shared by every connection to the server.
  backend_server(std::string pool, config::backend_server spec, server_settings settings, unsigned workers,
                 std::shared_ptr<ssl_ctx_st> tls_ctx = nullptr);

  const std::string& pool() const { return pool_; }
  const std::string& address() const { return spec_.address; }
  const config::backend_server& spec() const { return spec_; }
  const server_settings& settings() const { return settings_; }
  const mm::address& sockaddr() const { return sockaddr_; }
  bool address_ok() const { return address_ok_; }
  const std::shared_ptr<ssl_ctx_st>& tls_ctx() const { return tls_ctx_; }
  // The mcrouter pool-stats group (pool_group_stats.h; -1: none) its
  // connections count in: that of the pool that made it (a server several
  // pools share, as mcrouter configs do, counts in the first one's; its
  // requests count in the group of the pool that sent each).
  int pool_group() const { return pool_group_; }

  // Why the latest connect failed ("connection refused", "TLS handshake:
  // certificate verify failed (...)"), for `stats servers`; cleared by a
  // connect that succeeds. [any worker; leaf mutex, no I/O under it]
  void set_last_error(std::string why);
  std::string last_error() const;

  // ---- health [any worker] ----
  bool up() const { return up_.load(std::memory_order_relaxed); }
  // A reply came back: the failure streak ends.
  void record_success() {
    if (streak_.load(std::memory_order_relaxed) != 0) streak_.store(0, std::memory_order_relaxed);
    if (failures_.load(std::memory_order_relaxed) != 0) failures_.store(0, std::memory_order_relaxed);
  }
  // A failure. True if THIS call marked the server down (the caller then
  // starts the one prober). A refused connect marks it down at once.
  bool record_failure(failure_kind f);
  // The prober got an answer.
  void mark_up();
  // The failure that marked the server down last (the reason a request to
  // it while down is given: mcrouter's "Server unavailable. Reason: ...").
  failure_kind down_cause() const { return static_cast<failure_kind>(down_cause_.load(std::memory_order_relaxed)); }
  uint64_t transitions() const { return transitions_.load(std::memory_order_relaxed); }
  // Failures since the last reply as mcrouter's TKO tracker counts them
  // (`stats suspect_servers`' num_failures): each failure event
  // (record_failure), plus each request a failed connect failed and each
  // failed probe (add_failures), since mcrouter counts a lost connection
  // and every error reply alike. Not the streak that failure_limit
  // compares: that one counts events only, so one timeout with many
  // requests in flight is one failure. [relaxed]
  unsigned failure_streak() const { return failures_.load(std::memory_order_relaxed); }
  void add_failures(unsigned n) { failures_.fetch_add(n, std::memory_order_relaxed); }
  // What the server speaks, for `stats servers`: the pool's protocol, or with
  // `protocol: auto` what the latest connection's probe learned ("auto"
  // until one has). [any worker writes, stats reads]
  void learned_protocol(bool meta) { learned_.store(meta ? 2 : 1, std::memory_order_relaxed); }
  const char* protocol_name() const;

  // ---- reliable deletes [any thread] ----
  spool_counts& spool() const { return spool_; }

  // ---- counters ----
  server_counters& counters(unsigned worker) { return *counters_[worker]; }
  const std::vector<std::unique_ptr<server_counters>>& all_counters() const { return counters_; }
  // Every worker's counters and the transitions, summed, since the last
  // `stats reset` (which sets the baseline to the sum at that moment).
  // [stats, under server_stats's reset mutex]
  server_totals totals() const;
  void reset_totals() { baseline_ = sum_counters(); }

  // The server left the configuration: probers stop, connections close once
  // their requests are answered. [pooler, at reload]
  // A server still marked down says so in the log (mcrouter's "HOST:PORT was
  // TKO, removed from config").
  void retire();
  bool retired() const { return retired_.load(std::memory_order_relaxed); }

 private:
  std::string pool_;
  config::backend_server spec_;
  server_settings settings_;
  mm::address sockaddr_;
  bool address_ok_ = false;
  int pool_group_ = -1;
  std::shared_ptr<ssl_ctx_st> tls_ctx_;
  mutable std::mutex error_mutex_;  // leaf: guards last_error_ only
  std::string last_error_;
  std::atomic<bool> up_{true};
  std::atomic<unsigned> streak_{0};
  std::atomic<unsigned> failures_{0};  // failure_streak(): mcrouter's count
  std::atomic<uint64_t> transitions_{0};
  std::atomic<bool> retired_{false};
  std::atomic<uint8_t> down_cause_{static_cast<uint8_t>(failure_kind::Connect)};  // a failure_kind
  std::atomic<uint8_t> learned_{0};                         // protocol: auto; 0 not yet, 1 ascii, 2 meta
  std::vector<std::unique_ptr<server_counters>> counters_;  // one per worker
  mutable spool_counts spool_;
  server_totals sum_counters() const;
  server_totals baseline_;  // [under server_stats's reset mutex]
};

}  // namespace ithaca::proxy
