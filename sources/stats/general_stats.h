// The plain `stats` group, one row per line in memcached's order, and what
// the Prometheus page shows of each: adding a counter is one row here and
// the line that counts it. `stats` (server/server_stats.cc: general) prints
// the rows whose `when` holds, reading each with its `read` expression; the
// page (metrics/page_general.cc) shows the rows with a family; the
// functional test (tests/functional/test_counter_tables.py) reads this file
// and checks every row on both.
//
// A row: X(name, type, family, help, page read, labels, when, read).
//   type, family, help, page read, labels: stat_row.h (None / "": not on the page).
//   when, read: expressions in server_stats::general, over its names:
//     sum(cc::X)  the workers' command counters (counters.h) since `stats reset`;
//     s, b        the store's counters now and at `stats reset` (store_stats.h);
//     live, cfg_, store_, conns_, clock_, gc_, tls_, ru, table, wh: the
//     live settings, the start-up config, the store, the connection
//     registry, the clock, the GC sweep's counters, TLS (null: off), this
//     process's rusage, the hash table's shape, the watch hub.
// [any thread; constant]
#pragma once

#include "stat_row.h"

// clang-format off
#define ITHACA_GENERAL_STATS(X) \
  X("pid", None, "", "", Number, "", true, static_cast<int64_t>(getpid())) \
  X("uptime", Counter, "memcached_uptime_seconds", "Number of seconds since the server started.", Number, "", \
    true, clock_.uptime_s()) \
  X("time", Gauge, "memcached_time_seconds", "current UNIX time according to the server.", Number, "", \
    true, static_cast<int64_t>(std::time(nullptr))) \
  X("version", Gauge, "memcached_version", "The version of this memcached server.", Label, "version", \
    true, std::string(commands::kVersion)) \
  X("pointer_size", None, "", "", Number, "", true, static_cast<int>(sizeof(void*) * 8)) \
  X("rusage_user", Counter, "memcached_process_user_cpu_seconds_total", "Accumulated user time for this process.", \
    Number, "", true, timeval_text(ru.ru_utime)) \
  X("rusage_system", Counter, "memcached_process_system_cpu_seconds_total", \
    "Accumulated system time for this process.", Number, "", true, timeval_text(ru.ru_stime)) \
  X("max_connections", None, "", "", Number, "", true, live.max_connections) \
  X("curr_connections", Gauge, "memcached_current_connections", "Current number of open connections.", Number, "", \
    true, conns_.current()) \
  X("total_connections", Counter, "memcached_connections_total", \
    "Total number of connections opened since the server started running.", Number, "", \
    true, conns_.total() - total_conns_base_) \
  X("rejected_connections", Counter, "memcached_connections_rejected_total", \
    "Total number of connections rejected due to hitting the memcached's -c limit in maxconns_fast mode.", \
    Number, "", true, conns_.rejected.load() - rejected_base_) \
  X("connection_structures", None, "", "", Number, "", true, conns_.current()) \
  X("cmd_get", None, "", "", Number, "", true, sum(cc::cmd_get)) \
  /* cmd_set counts cas commands too (as memcached's does); the exporter subtracts them. */ \
  X("cmd_set", Counter, "memcached_commands_total", ITHACA_COMMANDS_HELP, SetsLessCas, "command=set,status=hit", \
    true, sum(cc::cmd_set)) \
  X("cmd_flush", Counter, "memcached_commands_total", ITHACA_COMMANDS_HELP, Number, "command=flush,status=hit", \
    true, sum(cc::cmd_flush)) \
  X("cmd_touch", Counter, "ithaca_touch_commands_total", "Touch commands.", Number, "", true, sum(cc::cmd_touch)) \
  X("cmd_meta", Counter, "ithaca_meta_commands_total", "Meta protocol commands.", Number, "", true, sum(cc::cmd_meta)) \
  /* Hits and misses: the local store's and, in the router role, what the backends answered the routed */ \
  /* requests (routed_counts.cc), so a memcached dashboard reads the same figures in front of a pool. */ \
  X("get_hits", Counter, "memcached_commands_total", ITHACA_COMMANDS_HELP, Number, "command=get,status=hit", \
    true, s.get_hits - b.get_hits + sum(cc::routed_get_hits)) \
  X("get_misses", Counter, "memcached_commands_total", ITHACA_COMMANDS_HELP, Number, "command=get,status=miss", \
    true, s.get_misses - b.get_misses + sum(cc::routed_get_misses)) \
  X("get_expired", Counter, "ithaca_get_expired_total", "Gets that found an expired item.", Number, "", \
    true, s.get_expired - b.get_expired) \
  X("get_flushed", Counter, "ithaca_get_flushed_total", "Gets that found an item invalidated by flush_all.", \
    Number, "", true, s.get_flushed - b.get_flushed) \
  X("delete_misses", Counter, "memcached_commands_total", ITHACA_COMMANDS_HELP, Number, \
    "command=delete,status=miss", true, s.delete_misses - b.delete_misses + sum(cc::routed_delete_misses)) \
  X("delete_hits", Counter, "memcached_commands_total", ITHACA_COMMANDS_HELP, Number, "command=delete,status=hit", \
    true, s.delete_hits - b.delete_hits + sum(cc::routed_delete_hits)) \
  X("incr_misses", Counter, "memcached_commands_total", ITHACA_COMMANDS_HELP, Number, "command=incr,status=miss", \
    true, s.incr_misses - b.incr_misses + sum(cc::routed_incr_misses)) \
  X("incr_hits", Counter, "memcached_commands_total", ITHACA_COMMANDS_HELP, Number, "command=incr,status=hit", \
    true, s.incr_hits - b.incr_hits + sum(cc::routed_incr_hits)) \
  X("decr_misses", Counter, "memcached_commands_total", ITHACA_COMMANDS_HELP, Number, "command=decr,status=miss", \
    true, s.decr_misses - b.decr_misses + sum(cc::routed_decr_misses)) \
  X("decr_hits", Counter, "memcached_commands_total", ITHACA_COMMANDS_HELP, Number, "command=decr,status=hit", \
    true, s.decr_hits - b.decr_hits + sum(cc::routed_decr_hits)) \
  X("cas_misses", Counter, "memcached_commands_total", ITHACA_COMMANDS_HELP, Number, "command=cas,status=miss", \
    true, s.cas_misses - b.cas_misses + sum(cc::routed_cas_misses)) \
  X("cas_hits", Counter, "memcached_commands_total", ITHACA_COMMANDS_HELP, Number, "command=cas,status=hit", \
    true, s.cas_hits - b.cas_hits + sum(cc::routed_cas_hits)) \
  X("cas_badval", Counter, "memcached_commands_total", ITHACA_COMMANDS_HELP, Number, "command=cas,status=badval", \
    true, s.cas_badval - b.cas_badval + sum(cc::routed_cas_badval)) \
  X("touch_hits", Counter, "memcached_commands_total", ITHACA_COMMANDS_HELP, Number, "command=touch,status=hit", \
    true, s.touch_hits - b.touch_hits + sum(cc::routed_touch_hits)) \
  X("touch_misses", Counter, "memcached_commands_total", ITHACA_COMMANDS_HELP, Number, "command=touch,status=miss", \
    true, s.touch_misses - b.touch_misses + sum(cc::routed_touch_misses)) \
  X("store_no_memory", Counter, "memcached_item_no_memory_total", \
    "The number of times an item could not be stored due to no more memory.", Number, "", \
    true, s.out_of_memory - b.out_of_memory) \
  X("auth_cmds", Counter, "ithaca_auth_commands_total", \
    "Client authentications answered (-Y tokens, -S SASL), right or wrong.", Number, "", true, sum(cc::auth_cmds)) \
  X("auth_errors", Counter, "ithaca_auth_errors_total", "Client authentications refused (a wrong user or password).", \
    Number, "", true, sum(cc::auth_errors)) \
  /* memcached prints it only with an idle timeout. */ \
  X("idle_kicks", None, "", "", Number, "", live.idle_timeout_ms > 0, sum(cc::idle_kicks)) \
  X("bytes_read", Counter, "memcached_read_bytes_total", "Total number of bytes read by this server from network.", \
    Number, "", true, sum(cc::bytes_read)) \
  X("bytes_written", Counter, "memcached_written_bytes_total", \
    "Total number of bytes sent by this server to network.", Number, "", true, sum(cc::bytes_written)) \
  X("limit_maxbytes", Gauge, "memcached_limit_bytes", "Number of bytes this server is allowed to use for storage.", \
    Number, "", true, store_.memory_limit()) \
  X("accepting_conns", Gauge, "memcached_accepting_connections", \
    "The Memcached server is currently accepting new connections.", Number, "", true, 1) \
  X("threads", None, "", "", Number, "", true, cfg_.server.workers) \
  X("conn_yields", Counter, "memcached_connections_yielded_total", \
    "Total number of connections yielded running due to hitting the memcached's -R limit.", Number, "", \
    true, sum(cc::conn_yields)) \
  X("hash_power_level", None, "", "", Number, "", true, table.power) \
  X("hash_bytes", None, "", "", Number, "", true, table.bytes) \
  X("hash_is_expanding", None, "", "", Number, "", true, table.growing ? 1 : 0) \
  /* memcached's figure (ITEM_ntotal summed, items.c do_item_link); the memory charge the limit bounds */ \
  /* is `stats slabs` total_malloced. */ \
  X("bytes", Gauge, "memcached_current_bytes", "Current number of bytes used to store items.", Number, "", \
    true, store_.item_bytes()) \
  X("curr_items", Gauge, "memcached_current_items", "Current number of items stored by this instance.", Number, "", \
    true, s.curr_items) \
  X("total_items", Counter, "memcached_items_total", \
    "Total number of items stored during the life of this instance.", Number, "", true, s.total_items - b.total_items) \
  X("expired_unfetched", None, "", "", Number, "", true, s.expired_unfetched - b.expired_unfetched) \
  X("evicted_unfetched", None, "", "", Number, "", true, s.evicted_unfetched - b.evicted_unfetched) \
  X("evictions", Counter, "memcached_items_evicted_total", \
    "Total number of valid items removed from cache to free memory for new items.", Number, "", \
    true, s.evictions - b.evictions) \
  X("reclaimed", Counter, "memcached_items_reclaimed_total", \
    "Total number of times an entry was stored using memory from an expired entry.", Number, "", \
    true, s.reclaimed - b.reclaimed) \
  /* memcached's names for its LRU segments' moves, S3-FIFO's here (store.h: eviction_policy; 0 with clock): */ \
  /* small queue -> main unread (its ring full), small -> main after a read, main's second chances. */ \
  X("moves_to_cold", Counter, "ithaca_moves_to_cold_total", \
    "Items moved on from the S3-FIFO small queue to main unread, its ring being full.", Number, "", \
    true, s.moves_to_cold - b.moves_to_cold) \
  X("moves_to_warm", Counter, "ithaca_moves_to_warm_total", \
    "Items moved from the S3-FIFO small queue to main, read while in it.", Number, "", \
    true, s.moves_to_warm - b.moves_to_warm) \
  X("moves_within_lru", Counter, "ithaca_moves_within_lru_total", \
    "Second chances the main queue's CLOCK hand gave items read since its last pass.", Number, "", \
    true, s.moves_within_lru - b.moves_within_lru) \
  /* `watch` (stats/watch_hub.h), memcached's names: lines made, lines a full watcher dropped, lines */ \
  /* handed to watchers, watchers now. No per-worker log buffer to overflow: log_worker_dropped is 0. */ \
  X("log_worker_dropped", None, "", "", Number, "", true, 0) \
  X("log_worker_written", None, "", "", Number, "", true, wh.written()) \
  X("log_watcher_skipped", None, "", "", Number, "", true, wh.skipped()) \
  X("log_watcher_sent", None, "", "", Number, "", true, wh.sent()) \
  X("log_watchers", None, "", "", Number, "", true, wh.watchers()) \
  /* memcached's TLS counters, printed only with TLS on, as it does; then ithaca's: handshakes done and */ \
  /* those whose sends the kernel encrypts. */ \
  X("ssl_new_sessions", None, "", "", Number, "", tls_ && tls_->config().session_cache, \
    tls_->counters().new_sessions.load()) \
  X("ssl_handshake_errors", None, "", "", Number, "", tls_, tls_->counters().handshake_errors.load()) \
  X("ssl_proto_errors", None, "", "", Number, "", tls_, tls_->counters().proto_errors.load()) \
  X("time_since_server_cert_refresh", None, "", "", Number, "", tls_, \
    tls_context::monotonic_s() - tls_->loaded_at_s()) \
  X("ssl_handshakes", None, "", "", Number, "", tls_, tls_->counters().handshakes.load()) \
  X("ssl_kernel_tls_connections", None, "", "", Number, "", tls_, tls_->counters().ktls_send.load()) \
  /* ithaca's own. */ \
  /* S3-FIFO's queues (0 with cache.eviction: clock): items and memory charge in small and main, stores of */ \
  /* a key found in the ghost set (straight to main), and what the small queue's rings and the ghost cost. */ \
  X("small_queue_items", Gauge, "ithaca_small_queue_items", "Items in the S3-FIFO small queue.", Number, "", \
    true, s.small_items) \
  X("small_queue_bytes", Gauge, "ithaca_small_queue_bytes", "Memory charge of the items in the S3-FIFO small queue.", \
    Number, "", true, s.small_bytes) \
  X("main_queue_items", Gauge, "ithaca_main_queue_items", "Items in the S3-FIFO main queue.", Number, "", \
    true, s.curr_items - std::min(s.small_items, s.curr_items)) \
  X("main_queue_bytes", Gauge, "ithaca_main_queue_bytes", "Memory charge of the items in the S3-FIFO main queue.", \
    Number, "", true, s.bytes - std::min(s.small_bytes, s.bytes)) \
  X("ghost_hits", Counter, "ithaca_ghost_hits_total", \
    "Stores of a key the S3-FIFO small queue had evicted lately, admitted straight to main.", Number, "", \
    true, s.ghost_hits - b.ghost_hits) \
  X("eviction_queue_bytes", Gauge, "ithaca_eviction_queue_bytes", \
    "Bytes of the S3-FIFO small queue's rings and ghost set, besides the items.", Number, "", \
    true, store_.eviction_queue_bytes()) \
  X("gc_runs", Counter, "ithaca_gc_runs_total", "Runs of the cron GC sweep.", Number, "", true, gc_.runs.load()) \
  X("gc_last_ms", Gauge, "ithaca_gc_last_duration_seconds", "Duration of the last GC sweep.", Millis, "", \
    true, gc_.last_ms.load()) \
  X("io_backend", Gauge, "ithaca_io_backend", "The kernel interface the workers use (io_uring or epoll).", Label, \
    "backend", true, io_backend_) \
  X("large_values", Gauge, "ithaca_large_values", "Items whose value lives in the large values' file.", Number, "", \
    true, s.large_values) \
  X("large_value_disk_bytes", Gauge, "ithaca_large_value_disk_bytes", "Bytes the large values use on disk.", \
    Number, "", true, store_.large_value_disk_used()) \
  X("large_value_disk_limit", Gauge, "ithaca_large_value_disk_limit_bytes", "The large values' disk budget.", \
    Number, "", true, store_.large_value_disk_limit()) \
  /* Large values evicted by the GC sweep (disk above its high watermark) and by a store that found the */ \
  /* disk budget full (the sweep keeps that rare). */ \
  X("large_value_gc_evictions", Counter, "ithaca_large_value_gc_evictions_total", \
    "Large values evicted by the GC sweep (disk above its high watermark).", Number, "", \
    true, s.large_value_gc_evictions - b.large_value_gc_evictions) \
  X("large_value_inline_evictions", Counter, "ithaca_large_value_inline_evictions_total", \
    "Large values evicted by a store that found the disk budget full.", Number, "", \
    true, s.large_value_inline_evictions - b.large_value_inline_evictions) \
  X("lease_tokens_issued", Counter, "ithaca_lease_tokens_issued_total", "Lease tokens handed out on misses.", \
    Number, "", true, s.lease_tokens - b.lease_tokens) \
  X("lease_waits", Counter, "ithaca_lease_waits_total", "Readers told to wait for a hot key's lease.", Number, "", \
    true, s.lease_waits - b.lease_waits) \
  X("lease_sets_refused", Counter, "ithaca_lease_sets_refused_total", "Sets refused for a stale lease token.", \
    Number, "", true, sum(cc::lease_sets_refused)) \
  X("protocol_errors", Counter, "ithaca_protocol_errors_total", "Requests that did not parse.", Number, "", \
    true, sum(cc::parse_errors)) \
  X("udp_requests", Counter, "ithaca_udp_requests_total", "UDP requests served.", Number, "", \
    true, sum(cc::udp_requests)) \
  X("udp_dropped", Counter, "ithaca_udp_dropped_total", "UDP requests dropped (malformed or over a bound).", \
    Number, "", true, sum(cc::udp_dropped)) \
  /* cumulative: the kernel's count, not reset */ \
  X("udp_kernel_drops", Counter, "ithaca_udp_kernel_drops_total", "Datagrams the kernel dropped on the UDP sockets.", \
    Number, "", true, udp_kernel_drops()) \
  X("verbosity", None, "", "", Number, "", true, verbosity_.load())
// clang-format on

namespace ithaca::stats {

inline constexpr stat_row kGeneralStats[] = {ITHACA_GENERAL_STATS(ITHACA_STAT_ROW)};

}  // namespace ithaca::stats
