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
#include <utility>
#include <vector>

#include "counters.h"
#include "exec_action.h"
#include "reply_drain.h"
#include "stats_provider.h"
#include "out_buffer.h"
#include "parse_result.h"
#include "parser.h"
#include "request.h"
#include "store.h"

namespace ithaca::cache {

using route::exec_action;
using route::reply_drain;
using route::stat_lines;
using route::stats_provider;

// What `version` and `stats` report: memcached's version (clients parse it to
// pick features) with ithaca's name after it.
inline constexpr std::string_view kVersion = "1.6.18-ithaca";

struct exec_context {
  store::store& store;
  command_counters& counters;  // this worker's
  stats_provider& stats;
  store::store_now now;        // refreshed by the caller for each batch
  bool enable_shutdown = false;
  std::string version{kVersion};  // what `version` answers
  std::string scratch;         // reusable buffer (values, numbers)
  reply_drain* drain = nullptr;  // null: replies are never drained early
};

// Drains `out` through ctx.drain once it holds route::kReplyHighWater bytes.
// False if the drain refused or failed: stop executing and close.
inline bool drain_if_full(protocol::out_buffer& out, exec_context& ctx) {
  return route::drain_if_full(out, ctx.drain);
}

// Executes one request. Replies are appended to `out`.
exec_action execute(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx);

// The reply of a parser error alone, with the cull of a text get refused
// for a long key (the router path, where the side effects happen on the
// servers). exec_errors.cc.
exec_action execute_parse_error_reply(const protocol::parse_result& result, const protocol::request& req,
                                      protocol::out_buffer& out);

// Handles a parser error: the reply (unless silent) and memcached's side
// effects (a `set` whose value was too large removes the old item).
exec_action execute_parse_error(const protocol::parse_result& result, const protocol::request& req,
                                protocol::out_buffer& out, exec_context& ctx);

}  // namespace ithaca::cache
