// The router role's summary groups, one row per line: the router_* lines of
// `stats` (after the general and replication ones), and a pool's lines of
// `stats pools` (POOL:FIELD) and a server's of `stats servers`
// (POOL/ADDRESS:FIELD), each with what the Prometheus page shows of it: the
// ithaca_pool_* families labelled `pool`, the ithaca_server_* families
// labelled `pool` and `server` (the address), before the row's own labels.
// Adding a figure is one row here. server/router_stats.cc prints the rows
// (per pool, per server); the page (metrics/page_router.cc) shows the rows
// with a family; the functional test (tests/functional/test_counter_tables.py)
// reads this file and checks every row on both.
//
// A row: X(name, type, family, help, page read, labels, when, read), the
// columns of stat_row.h (None / "": not on the page). A row read PerName
// stands for one line per name, NAMEreply-result or NAMEfailure-kind
// (replies_found, failures_timeout), the name the value of its label.
//   when, read: expressions in router_stats.cc over, for the summary, `tree`
//   (the live route tree), its `servers`, `down`, `requests` and `failures`
//   summed over every pool, and `sp` (proxy::spool_totals, every server since
//   the start); for a pool, `p` (the pool), `up`, `requests`, `replies`,
//   `failures` and `results` (by reply result) summed over its servers; for
//   a server, `s` (proxy::backend_server), `n` (its proxy::server_totals
//   since `stats reset`), `g` (its gauges summed over the workers) and `sp`
//   (its delete spool's counts); `reply_results(a)` and `failure_kinds(a)`
//   make a PerName row's lines from a count per result or failure kind;
//   `load(x)` is a relaxed load.
// `stats latency` (the histograms) and `stats routes` (a node's counters,
// which the page names from the line: page_routes.cc) are not tables.
// [any thread; constant]
#pragma once

#include "stat_row.h"

#define ITHACA_POOL_RESULTS_HELP "Replies from the pool's servers by result (a retrieval counts each key)."

// clang-format off
#define ITHACA_ROUTER_SUMMARY_STATS(X) \
  X("router_pools", None, "", "", Number, "", true, tree.pools().size()) \
  X("router_servers", None, "", "", Number, "", true, servers) \
  X("router_servers_down", None, "", "", Number, "", true, down) \
  X("router_requests", None, "", "", Number, "", true, requests) \
  X("router_failures", None, "", "", Number, "", true, failures) \
  /* Reliable deletes, every server since the start (proxy/delete_spool.h). */ \
  X("router_deletes_spooled", None, "", "", Number, "", true, load(sp.spooled)) \
  X("router_deletes_replayed", None, "", "", Number, "", true, load(sp.replayed)) \
  X("router_deletes_dropped", None, "", "", Number, "", true, load(sp.dropped))

#define ITHACA_POOL_STATS(X) \
  X("servers", Gauge, "ithaca_pool_servers", "Servers in the pool.", Number, "", true, p->servers().size()) \
  X("servers_up", Gauge, "ithaca_pool_servers_up", "Servers of the pool marked up.", Number, "", true, up) \
  X("requests", Counter, "ithaca_pool_requests_total", "Requests sent to the pool's servers.", Number, "", \
    true, requests) \
  X("replies", Counter, "ithaca_pool_replies_total", "Replies from the pool's servers.", Number, "", true, replies) \
  X("replies_", Counter, "ithaca_pool_reply_results_total", ITHACA_POOL_RESULTS_HELP, PerName, "result", \
    true, reply_results(results)) \
  X("failures", Counter, "ithaca_pool_failures_total", "Requests to the pool's servers that failed.", Number, "", \
    true, failures)

#define ITHACA_SERVER_STATS(X) \
  X("state", Gauge, "ithaca_server_up", "1 if the server is marked up, 0 if down (failing fast, probed).", Up, "", \
    true, s->up() ? "up" : "down") \
  X("protocol", None, "", "", Number, "", true, s->protocol_name()) \
  X("tls", None, "", "", Number, "", true, config::describe(s->settings().tls)) \
  /* the last failure's text, once there was one */ \
  X("last_error", None, "", "", Number, "", !s->last_error().empty(), s->last_error()) \
  X("transitions", Counter, "ithaca_server_transitions_total", "Up/down transitions of the server.", Number, "", \
    true, n.transitions) \
  X("requests", Counter, "ithaca_server_requests_total", "Requests sent to the server.", Number, "", \
    true, n.requests) \
  X("replies", Counter, "ithaca_server_replies_total", "Replies from the server.", Number, "", true, n.replies) \
  X("replies_", Counter, "ithaca_server_reply_results_total", \
    "Replies from the server by result (a retrieval counts each key).", PerName, "result", \
    true, reply_results(n.results)) \
  X("failures_", Counter, "ithaca_server_failures_total", "Requests to the server that failed, by kind.", PerName, \
    "kind", true, failure_kinds(n.failures)) \
  X("inflight", Gauge, "ithaca_server_inflight", "Requests sent and not yet answered.", Number, "", true, g.inflight) \
  X("connections", Gauge, "ithaca_server_connections", "Open connections to the server (all workers).", Number, "", \
    true, g.connections) \
  X("connects", Counter, "ithaca_server_connects_total", "Connections opened to the server.", Number, "", \
    true, n.connects) \
  X("joined_gets", Counter, "ithaca_server_joined_gets_total", "Gets that joined another's get line.", Number, "", \
    true, n.joined) \
  X("idle_closes", Counter, "ithaca_server_idle_closes_total", "Idle connections the server closed.", Number, "", \
    true, n.idle_closes) \
  X("deletes_spooled", None, "", "", Number, "", true, load(sp.spooled)) \
  X("deletes_replayed", None, "", "", Number, "", true, load(sp.replayed)) \
  X("deletes_dropped", None, "", "", Number, "", true, load(sp.dropped)) \
  X("spool_bytes", None, "", "", Number, "", true, load(sp.bytes)) \
  X("latency_p50_us", None, "", "", Number, "", true, proxy::latency_histogram::quantile(n.latency, 0.50)) \
  X("latency_p99_us", None, "", "", Number, "", true, proxy::latency_histogram::quantile(n.latency, 0.99)) \
  X("latency_p999_us", None, "", "", Number, "", true, proxy::latency_histogram::quantile(n.latency, 0.999))
// clang-format on

namespace ithaca::stats {

inline constexpr stat_row kPoolStats[] = {ITHACA_POOL_STATS(ITHACA_STAT_ROW)};
inline constexpr stat_row kServerStats[] = {ITHACA_SERVER_STATS(ITHACA_STAT_ROW)};

}  // namespace ithaca::stats
