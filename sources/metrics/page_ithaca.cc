// ithaca_*: the store's own figures and replication (from `stats`), and
// each worker machine's runtime counters.
#include "page_parts.h"

namespace ithaca::metrics {

namespace {

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
      {"auth_cmds", "ithaca_auth_commands_total", C,
       "Client authentications answered (-Y tokens, -S SASL), right or wrong."},
      {"auth_errors", "ithaca_auth_errors_total", C, "Client authentications refused (a wrong user or password)."},
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
      {"repl_tls_refused", "ithaca_replication_tls_refused_total", C,
       "Would-be slaves refused in the replication.tls handshake (no accepted certificate)."},
      {"repl_master_connects", "ithaca_replication_master_connects_total", C, "Connections a slave made to its master."},
      {"repl_master_tls_failures", "ithaca_replication_master_tls_failures_total", C,
       "TLS handshakes with the master that failed (replication.tls)."},
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

void ithaca_families(prom_writer& w, const page_input& in) {
  const lookup general = to_map(in.general);
  ithaca_general(w, general);
  ithaca_replication(w, general);
  ithaca_runtime(w, in.workers);
}

}  // namespace ithaca::metrics
