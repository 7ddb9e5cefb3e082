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

#define ITHACA_MC_STATES_HELP \
  "Server connections of the workers by state: new (never opened), up, down (the server is marked down), " \
  "closed (opened, then closed)."
#define ITHACA_MC_REQUESTS_HELP "Requests received by mcrouter's request type (each key of a multi-key get)."
#define ITHACA_MC_RESULTS_HELP "Calls to the servers that ended in an error, by mcrouter's result."
#define ITHACA_MC_FAILOVER_HELP \
  "mcrouter's failover counters (stats/failover_counts.h): errors seen by failover routes, requests whose " \
  "every try failed, the deterministic order's hash collisions."

// clang-format off
// mcrouter's own counters (its stat_list.h and request stats) that its tests
// and dashboards read, printed in `stats` after the router summary (and in
// `stats all`). when, read: expressions in server_stats.cc over `f`
// (router_stats.h: mcrouter_figures, the live tree's servers) and
// sum(cc::X) (the workers' command counters since `stats reset`).
//   num_servers*: mcrouter keeps one destination per server per proxy
//     thread; ithaca one connection set per server per worker, so each pool
//     server counts once per worker, by that worker's state.
//   cmd_TYPE_count: requests as they reach the route (stats/mcrouter_counts.h).
//   result_*_count: the servers' failures and error replies (every call,
//     shadows included: ithaca's counters do not tell them apart, so the
//     _all_count lines are the same figures): connect_error a refused or
//     broken connection, data_timeout no reply in time, tko a server
//     marked down failing fast, local_error a reply that did not parse or a
//     full queue, client_error / remote_error the server's CLIENT_ERROR /
//     SERVER_ERROR, error all of them and the server's ERROR.
//   failover_*: fo, the process's stats::failover_counts (failover_counts.h).
#define ITHACA_MCROUTER_STATS(X) \
  X("num_servers", Gauge, "ithaca_mcrouter_servers", \
    "Server connections the workers keep or may keep: each pool server once per worker.", Number, "", \
    true, f.servers) \
  X("num_servers_new", Gauge, "ithaca_mcrouter_server_states", ITHACA_MC_STATES_HELP, Number, "state=new", \
    true, f.fresh) \
  X("num_servers_up", Gauge, "ithaca_mcrouter_server_states", ITHACA_MC_STATES_HELP, Number, "state=up", \
    true, f.up) \
  X("num_servers_down", Gauge, "ithaca_mcrouter_server_states", ITHACA_MC_STATES_HELP, Number, "state=down", \
    true, f.down) \
  X("num_servers_closed", Gauge, "ithaca_mcrouter_server_states", ITHACA_MC_STATES_HELP, Number, "state=closed", \
    true, f.closed) \
  X("num_suspect_servers", Gauge, "ithaca_mcrouter_suspect_servers", \
    "Servers marked down or with failures since their last reply (stats suspect_servers).", Number, "", \
    true, f.suspect) \
  /* the dev_null routes' drops; the page has them per route (ithaca_route_*) */ \
  X("dev_null_requests", None, "", "", Number, "", true, f.dev_null) \
  X("cmd_add_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, "request=add", \
    true, sum(cc::mc_add)) \
  X("cmd_append_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, \
    "request=append", true, sum(cc::mc_append)) \
  X("cmd_cas_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, "request=cas", \
    true, sum(cc::mc_cas)) \
  X("cmd_decr_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, "request=decr", \
    true, sum(cc::mc_decr)) \
  X("cmd_delete_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, \
    "request=delete", true, sum(cc::mc_delete)) \
  X("cmd_flushall_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, \
    "request=flushall", true, sum(cc::mc_flushall)) \
  X("cmd_gat_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, "request=gat", \
    true, sum(cc::mc_gat)) \
  X("cmd_gats_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, "request=gats", \
    true, sum(cc::mc_gats)) \
  X("cmd_get_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, "request=get", \
    true, sum(cc::mc_get)) \
  X("cmd_gets_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, "request=gets", \
    true, sum(cc::mc_gets)) \
  X("cmd_incr_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, "request=incr", \
    true, sum(cc::mc_incr)) \
  X("cmd_lease_get_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, \
    "request=lease_get", true, sum(cc::mc_lease_get)) \
  X("cmd_lease_set_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, \
    "request=lease_set", true, sum(cc::mc_lease_set)) \
  X("cmd_prepend_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, \
    "request=prepend", true, sum(cc::mc_prepend)) \
  X("cmd_replace_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, \
    "request=replace", true, sum(cc::mc_replace)) \
  X("cmd_set_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, "request=set", \
    true, sum(cc::mc_set)) \
  X("cmd_touch_count", Counter, "ithaca_mcrouter_requests_total", ITHACA_MC_REQUESTS_HELP, Number, \
    "request=touch", true, sum(cc::mc_touch)) \
  X("result_error_count", Counter, "ithaca_mcrouter_results_total", ITHACA_MC_RESULTS_HELP, Number, \
    "result=error", true, f.error) \
  X("result_error_all_count", None, "", "", Number, "", true, f.error) \
  X("result_connect_error_count", Counter, "ithaca_mcrouter_results_total", ITHACA_MC_RESULTS_HELP, Number, \
    "result=connect_error", true, f.connect_error) \
  X("result_connect_error_all_count", None, "", "", Number, "", true, f.connect_error) \
  X("result_data_timeout_count", Counter, "ithaca_mcrouter_results_total", ITHACA_MC_RESULTS_HELP, Number, \
    "result=data_timeout", true, f.data_timeout) \
  X("result_data_timeout_all_count", None, "", "", Number, "", true, f.data_timeout) \
  X("result_tko_count", Counter, "ithaca_mcrouter_results_total", ITHACA_MC_RESULTS_HELP, Number, "result=tko", \
    true, f.tko) \
  X("result_tko_all_count", None, "", "", Number, "", true, f.tko) \
  X("result_client_error_count", Counter, "ithaca_mcrouter_results_total", ITHACA_MC_RESULTS_HELP, Number, \
    "result=client_error", true, f.client_error) \
  X("result_client_error_all_count", None, "", "", Number, "", true, f.client_error) \
  X("result_local_error_count", Counter, "ithaca_mcrouter_results_total", ITHACA_MC_RESULTS_HELP, Number, \
    "result=local_error", true, f.local_error) \
  X("result_local_error_all_count", None, "", "", Number, "", true, f.local_error) \
  X("result_remote_error_count", Counter, "ithaca_mcrouter_results_total", ITHACA_MC_RESULTS_HELP, Number, \
    "result=remote_error", true, f.remote_error) \
  X("result_remote_error_all_count", None, "", "", Number, "", true, f.remote_error) \
  X("failover_num_collisions", Counter, "ithaca_mcrouter_failover_total", ITHACA_MC_FAILOVER_HELP, Number, \
    "event=num_collisions", true, load(fo.num_collisions)) \
  X("failover_num_failed_domain_collisions", Counter, "ithaca_mcrouter_failover_total", ITHACA_MC_FAILOVER_HELP, \
    Number, "event=num_failed_domain_collisions", true, load(fo.num_failed_domain_collisions)) \
  X("failover_policy_result_error", Counter, "ithaca_mcrouter_failover_total", ITHACA_MC_FAILOVER_HELP, Number, \
    "event=policy_result_error", true, load(fo.policy_result_error)) \
  X("failover_all_failed_count", Counter, "ithaca_mcrouter_failover_total", ITHACA_MC_FAILOVER_HELP, Number, \
    "event=all_failed", true, load(fo.all_failed_count)) \
  X("failover_policy_tko_error", Counter, "ithaca_mcrouter_failover_total", ITHACA_MC_FAILOVER_HELP, Number, \
    "event=policy_tko_error", true, load(fo.policy_tko_error))

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
  X("late_replies", Counter, "ithaca_server_late_replies_total", \
    "Replies that came after their request timed out, read and dropped.", Number, "", true, n.late_replies) \
  X("late_closes", Counter, "ithaca_server_late_closes_total", \
    "Connections closed because timed-out requests' replies did not come.", Number, "", true, n.late_closes) \
  X("deletes_spooled", None, "", "", Number, "", true, load(sp.spooled)) \
  X("deletes_replayed", None, "", "", Number, "", true, load(sp.replayed)) \
  X("deletes_dropped", None, "", "", Number, "", true, load(sp.dropped)) \
  X("spool_bytes", None, "", "", Number, "", true, load(sp.bytes)) \
  X("latency_p50_us", None, "", "", Number, "", true, proxy::latency_histogram::quantile(n.latency, 0.50)) \
  X("latency_p99_us", None, "", "", Number, "", true, proxy::latency_histogram::quantile(n.latency, 0.99)) \
  X("latency_p999_us", None, "", "", Number, "", true, proxy::latency_histogram::quantile(n.latency, 0.999))
// clang-format on

namespace ithaca::stats {

inline constexpr stat_row kMcrouterStats[] = {ITHACA_MCROUTER_STATS(ITHACA_STAT_ROW)};
inline constexpr stat_row kPoolStats[] = {ITHACA_POOL_STATS(ITHACA_STAT_ROW)};
inline constexpr stat_row kServerStats[] = {ITHACA_SERVER_STATS(ITHACA_STAT_ROW)};

}  // namespace ithaca::stats
