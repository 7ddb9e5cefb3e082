#include "repl_stats.h"

#include <string>

namespace ithaca::server {

void repl_stat_lines(const replication::repl_counters& c, stats::stat_lines& out) {
  auto add = [&out](const char* name, const std::atomic<uint64_t>& v) {
    out.emplace_back(name, std::to_string(v.load(std::memory_order_relaxed)));
  };
  out.emplace_back("repl_role", c.role.load(std::memory_order_relaxed));
  add("repl_role_changes", c.role_changes);
  add("repl_slaves", c.slaves);
  add("repl_slaves_joined", c.slaves_joined);
  add("repl_slaves_dropped", c.slaves_dropped);
  add("repl_syncs_done", c.syncs_done);
  add("repl_sync_items", c.sync_items);
  add("repl_records_sent", c.records_sent);
  add("repl_bytes_sent", c.bytes_sent);
  add("repl_lag_bytes", c.lag_bytes);
  add("repl_queue_overflows", c.queue_overflows);
  add("repl_peers_refused", c.peers_refused);
  add("repl_tls_refused", c.tls_refused);
  add("repl_master_tls_failures", c.master_tls_failures);
  add("repl_master_connects", c.master_connects);
  add("repl_master_timeouts", c.master_timeouts);
  // yrmcds's names for what a slave applied (created and updated are one count here).
  add("repl_updated", c.applied_sets);
  add("repl_touched", c.applied_touches);
  add("repl_removed", c.applied_deletes);
  add("repl_sets_refused", c.sets_refused);
  add("repl_stream_errors", c.stream_errors);
  // ack: slave (master).
  add("repl_ack_requests", c.ack_requests);
  add("repl_ack_waits", c.ack_waits);
  add("repl_ack_confirmed", c.ack_confirmed);
  add("repl_ack_timeouts", c.ack_timeouts);
  add("repl_ack_unreplicated", c.ack_unreplicated);
  const uint64_t confirmed = c.ack_confirmed.load(std::memory_order_relaxed);
  out.emplace_back("repl_ack_latency_avg_us",
                   std::to_string(confirmed ? c.ack_latency_us.load(std::memory_order_relaxed) / confirmed : 0));
  add("repl_ack_latency_max_us", c.ack_latency_max_us);
}

}  // namespace ithaca::server
