// The cache executor: carries out one parsed request (ascii, meta or binary)
// against the local store and appends the reply, byte for byte what memcached
// 1.6 would send, to the connection's out_buffer.
//
// Thread: runs in a client coroutine on a worker machine. It takes store bucket
// locks only inside store calls (never across a suspension). Reading a value
// kept in a temp file is file I/O: it goes through mm::blocking_call so the
// worker never blocks, and so it must be called from a coroutine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "counters.h"
#include "exec_action.h"
#include "local_executor.h"
#include "out_buffer.h"
#include "parse_result.h"
#include "parser.h"
#include "reply_drain.h"
#include "request.h"
#include "store.h"

namespace ithaca::cache {

using flow::exec_action;
using flow::reply_drain;
using stats::command_counters;
using stats::counter;

// One connection's view of the local store. The request path reaches it
// through flow::local_executor (the `local` route); server commands (stats,
// version, ...) never come here (flow/server_commands.h).
struct exec_context final : flow::local_executor {
  exec_context(store::store& st, command_counters& c) : store(st), counters(c) {}

  store::store& store;
  command_counters& counters;    // this worker's
  store::store_now now;          // refreshed by the caller for each batch
  std::string scratch;           // reusable buffer (values, numbers)
  reply_drain* drain = nullptr;  // null: replies are never drained early
  uint64_t conn_id = 0;          // `stats conns`' id: the cfd= of watch lines

  exec_action execute(const protocol::request& req, protocol::out_buffer& out) override;
  exec_action execute_parse_error(const protocol::parse_result& result, const protocol::request& req,
                                  protocol::out_buffer& out) override;
  void prefetch(std::string_view input) override;
  // The l1l2 route's L1 (exec_l1.cc).
  bool lookup(std::string_view key, protocol::routed_result& result, std::size_t index) override;
  void fill(std::string_view key, std::uint32_t flags, std::string_view value, std::int64_t ttl) override;
  void invalidate(std::string_view key) override;
};

// Drains `out` through ctx.drain once it holds flow::kReplyHighWater bytes.
// False if the drain refused or failed: stop executing and close.
inline bool drain_if_full(protocol::out_buffer& out, exec_context& ctx) { return flow::drain_if_full(out, ctx.drain); }

// Executes one request on the store. Replies are appended to `out`.
exec_action execute(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx);

// Handles a parser error: the reply (unless silent) and memcached's side
// effects (a `set` whose value was too large removes the old item).
exec_action execute_parse_error(const protocol::parse_result& result, const protocol::request& req,
                                protocol::out_buffer& out, exec_context& ctx);

}  // namespace ithaca::cache
