// Replication's lines of `stats` (after the general ones, only with
// replication configured), one row per line, and what the Prometheus page
// shows of each: the same columns as general_stats.h. `read` is an
// expression in server/repl_stats.cc over `c`, the process's
// replication::repl_counters, and `load(x)`, a relaxed load of one of them.
// [any thread; constant]
#pragma once

#include "stat_row.h"

#define ITHACA_REPL_APPLIED_HELP "Changes a slave applied, by kind."

// clang-format off
#define ITHACA_REPL_STATS(X) \
  X("repl_role", Gauge, "ithaca_replication_role", "The replication role now (1 for the current one).", Label, \
    "role", true, std::string(c.role.load(std::memory_order_relaxed))) \
  X("repl_role_changes", Counter, "ithaca_replication_role_changes_total", "Role changes (virtual IP).", Number, "", \
    true, load(c.role_changes)) \
  X("repl_slaves", Gauge, "ithaca_replication_slaves", "Slaves connected to this master.", Number, "", \
    true, load(c.slaves)) \
  X("repl_slaves_joined", Counter, "ithaca_replication_slaves_joined_total", "Slaves that registered.", Number, "", \
    true, load(c.slaves_joined)) \
  X("repl_slaves_dropped", Counter, "ithaca_replication_slaves_dropped_total", \
    "Slaves dropped (silent, too far behind, or gone).", Number, "", true, load(c.slaves_dropped)) \
  X("repl_syncs_done", Counter, "ithaca_replication_syncs_done_total", "Initial syncs completed.", Number, "", \
    true, load(c.syncs_done)) \
  X("repl_sync_items", Counter, "ithaca_replication_sync_items_total", "Items sent by initial syncs.", Number, "", \
    true, load(c.sync_items)) \
  X("repl_records_sent", Counter, "ithaca_replication_records_sent_total", "Change records sent to slaves.", \
    Number, "", true, load(c.records_sent)) \
  X("repl_bytes_sent", Counter, "ithaca_replication_sent_bytes_total", "Bytes sent to slaves.", Number, "", \
    true, load(c.bytes_sent)) \
  X("repl_lag_bytes", Gauge, "ithaca_replication_lag_bytes", "Bytes queued for the slowest slave.", Number, "", \
    true, load(c.lag_bytes)) \
  X("repl_queue_overflows", Counter, "ithaca_replication_queue_overflows_total", \
    "Records dropped because the workers' hand-off ring was full.", Number, "", true, load(c.queue_overflows)) \
  X("repl_peers_refused", Counter, "ithaca_replication_peers_refused_total", \
    "Would-be slaves refused by replication.allow.", Number, "", true, load(c.peers_refused)) \
  X("repl_tls_refused", Counter, "ithaca_replication_tls_refused_total", \
    "Would-be slaves refused in the replication.tls handshake (no accepted certificate).", Number, "", \
    true, load(c.tls_refused)) \
  X("repl_master_tls_failures", Counter, "ithaca_replication_master_tls_failures_total", \
    "TLS handshakes with the master that failed (replication.tls).", Number, "", true, load(c.master_tls_failures)) \
  X("repl_master_connects", Counter, "ithaca_replication_master_connects_total", \
    "Connections a slave made to its master.", Number, "", true, load(c.master_connects)) \
  X("repl_master_timeouts", Counter, "ithaca_replication_master_timeouts_total", "Masters a slave gave up as silent.", \
    Number, "", true, load(c.master_timeouts)) \
  /* yrmcds's names for what a slave applied (created and updated are one count here). */ \
  X("repl_updated", Counter, "ithaca_replication_applied_total", ITHACA_REPL_APPLIED_HELP, Number, "op=set", \
    true, load(c.applied_sets)) \
  X("repl_touched", Counter, "ithaca_replication_applied_total", ITHACA_REPL_APPLIED_HELP, Number, "op=touch", \
    true, load(c.applied_touches)) \
  X("repl_removed", Counter, "ithaca_replication_applied_total", ITHACA_REPL_APPLIED_HELP, Number, "op=delete", \
    true, load(c.applied_deletes)) \
  X("repl_sets_refused", None, "", "", Number, "", true, load(c.sets_refused)) \
  X("repl_stream_errors", Counter, "ithaca_replication_stream_errors_total", "Malformed records a slave received.", \
    Number, "", true, load(c.stream_errors)) \
  /* ack: slave (master). */ \
  X("repl_ack_requests", Counter, "ithaca_replication_ack_requests_total", \
    "Writes that asked for a slave's ack (ack: slave).", Number, "", true, load(c.ack_requests)) \
  X("repl_ack_waits", Counter, "ithaca_replication_ack_waits_total", "Writes that waited for a slave's ack.", \
    Number, "", true, load(c.ack_waits)) \
  X("repl_ack_confirmed", Counter, "ithaca_replication_ack_confirmed_total", "Writes a slave confirmed.", Number, "", \
    true, load(c.ack_confirmed)) \
  X("repl_ack_timeouts", Counter, "ithaca_replication_ack_timeouts_total", "Writes whose ack wait timed out.", \
    Number, "", true, load(c.ack_timeouts)) \
  X("repl_ack_unreplicated", Counter, "ithaca_replication_ack_unreplicated_total", \
    "Writes answered with no slave to confirm them.", Number, "", true, load(c.ack_unreplicated)) \
  X("repl_ack_latency_avg_us", None, "", "", Number, "", true, \
    ack_latency_avg_us(c)) \
  X("repl_ack_latency_max_us", Gauge, "ithaca_replication_ack_latency_max_seconds", "The longest ack wait confirmed.", \
    Micros, "", true, load(c.ack_latency_max_us))
// clang-format on

namespace ithaca::stats {

inline constexpr stat_row kReplStats[] = {ITHACA_REPL_STATS(ITHACA_STAT_ROW)};

}  // namespace ithaca::stats
