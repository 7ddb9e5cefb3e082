// Commands the server answers itself, whatever the route tree says and
// whichever role it plays: version, verbosity, stats, quit, shutdown,
// cache_memlimit, the operator commands (watch, slabs, lru, lru_crawler), mn,
// binary Noop/Version/Stat/SASL, and a command nobody knows
// (protocol::command_class::Server). The route tree supplies them as its
// server route (route/routes/server_route.h); the local store never sees them.
//
// Thread: a client coroutine (or the UDP loop) on a worker machine. Nothing
// here waits; the stats provider only reads counters.
#pragma once

#include <cstdint>
#include <string_view>

#include "auth.h"
#include "counters.h"
#include "exec_action.h"
#include "item_dump.h"
#include "out_buffer.h"
#include "pool_stats.h"
#include "request.h"
#include "service_info.h"
#include "stats_provider.h"

namespace ithaca::commands {

// The names the commands speak in: the pipeline's next action (flow/) and
// the stats layer's counters, lines and providers (stats/).
using flow::exec_action;
using stats::command_counters;
using stats::pool_stats_source;
using stats::stat_lines;
using stats::stats_provider;

// What `version` and `stats` report: memcached's version (clients parse it to
// pick features; ithaca answers as memcached 1.6.45) with ithaca's name after it.
inline constexpr std::string_view kVersion = "1.6.45-ithaca";

struct server_context {
  stats_provider& stats;
  command_counters& counters;  // this worker's (mn counts as a meta command)
  bool enable_shutdown = false;
  std::string_view version = kVersion;
  // The configuration file and when it was last loaded (unix seconds), for
  // `__mcrouter__.config_file` / `config_age` (route/introspect.h). They
  // point into the live-settings snapshot the caller holds.
  std::string_view config_file;
  std::int64_t config_loaded_at = 0;
  // The rest of what `__mcrouter__.*` tells of that file (service_info.h);
  // null: no file loaded (tests, UDP before its first batch).
  const service_info* info = nullptr;
  // `watch`: only a stream connection can become a watcher (the TCP / unix
  // client sets this); the kinds its last `watch` asked for.
  bool can_watch = false;
  std::uint32_t watch_kinds = 0;
  // `lru_crawler metadump|mgdump`: the local store's dump (null: no stream to
  // dump to, e.g. UDP), and whether dumps are allowed (memcached -X: not).
  item_dump_source* items = nullptr;
  bool dump_enabled = true;  // also stats cachedump and stats detail (memcached 1.6.45's -X)
  // flush_all and binary Flush/FlushQ (memcached -F: refused, refuse_flush_all).
  bool flush_enabled = true;
  // `stats items` / `stats slabs` of a connection whose requests go to pools:
  // the pools' servers answer them (pool_stats.h); null: the local store.
  pool_stats_source* pool_stats = nullptr;
  // Requests before this one still await their replies (the router role),
  // so this one's reply goes to a holding buffer, not the connection: the
  // commands that take the connection over (watch, the dumps) refuse, as
  // memcached refuses them behind replies not yet sent. Set per request by
  // route::execute_input.
  bool replies_pending = false;
  // The connection closes because its client said `quit` (conn_close reason=normal).
  bool quit = false;
  // -S: who checks SASL passwords (null: SASL off, its opcodes unknown), and
  // the state of the connection being served (the client points it at the
  // connection's own, per batch; null for UDP).
  const sasl_checker* sasl = nullptr;
  conn_auth* auth = nullptr;
};

// -S before authentication: whether a binary request (by opcode) may run;
// the others get "Auth failure." and the connection closes (memcached's
// authenticated(): SASL's three and version).
bool allowed_unauthenticated(uint8_t opcode);

exec_action execute_server_command(const protocol::request& req, protocol::out_buffer& out, server_context& ctx);

// memcached -F's answer to a flush (protocol::command_class::Flush) while
// ctx.flush_enabled is off, in either role, before any route: ascii
// "CLIENT_ERROR flush_all not allowed" (nothing with noreply), counted in
// cmd_flush as memcached counts it; binary Flush and FlushQ alike "Auth
// failure." (status 0x20), not counted, as memcached 1.6.45 does.
void refuse_flush_all(const protocol::request& req, protocol::out_buffer& out, server_context& ctx);

// `stats [group]` for text and binary (stats_command.cc).
exec_action execute_stats(const protocol::request& req, protocol::out_buffer& out, server_context& ctx);
// watch (exec_action::Watch with ctx.watch_kinds set, or memcached's refusal),
// lru (memcached's answers with its LRU maintainer off), lru_crawler (crawl,
// metadump, mgdump, enable/disable, tocrawl, sleep) (admin_command.cc).
exec_action execute_admin(const protocol::request& req, protocol::out_buffer& out, server_context& ctx);
// slabs reassign / automove, memcached 1.6.45's answers (slabs_command.cc).
exec_action execute_slabs(const protocol::request& req, protocol::out_buffer& out, server_context& ctx);
// SASL_LIST_MECHS, SASL_AUTH, SASL_STEP with -S (sasl_command.cc).
exec_action execute_sasl(const protocol::request& req, protocol::out_buffer& out, server_context& ctx);

}  // namespace ithaca::commands
