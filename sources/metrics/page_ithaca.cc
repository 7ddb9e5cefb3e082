// ithaca_*: the store's own figures, mcrouter's counters and replication
// (from `stats`), and
// each worker machine's runtime counters.
#include "general_stats.h"
#include "page_parts.h"
#include "repl_stats_table.h"
#include "router_stats_table.h"

namespace ithaca::metrics {

namespace {

void ithaca_general(prom_writer& w, const lookup& s) {
  add_rows(w, s, stats::kGeneralStats, "ithaca_");
  add_rows(w, s, stats::kMcrouterStats, "ithaca_");  // mcrouter's counters, in `stats` too
}

void ithaca_replication(prom_writer& w, const lookup& s) {
  if (s.find("repl_role") == s.end()) return;  // replication not configured
  add_rows(w, s, stats::kReplStats, "ithaca_");
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

void ithaca_families(prom_writer& w, const page_input& in) {
  const lookup general = to_map(in.general);
  ithaca_general(w, general);
  ithaca_replication(w, general);
  ithaca_runtime(w, in.workers);
}

}  // namespace ithaca::metrics
