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
#include "out_buffer.h"
#include "parse_result.h"
#include "parser.h"
#include "request.h"
#include "store.h"

namespace ithaca::cache {

using stat_lines = std::vector<std::pair<std::string, std::string>>;

// What `version` and `stats` report: memcached's version (clients parse it to
// pick features) with ithaca's name after it.
inline constexpr std::string_view kVersion = "1.6.18-ithaca";

// Server-wide statistics for the `stats` commands, implemented by the server.
// Called from a worker coroutine; implementations only read counters.
class stats_provider {
 public:
  virtual ~stats_provider() = default;
  // Fills `out` for `stats <arg>` ("" = general stats, "settings", "items",
  // "slabs", "conns", ...). Returns false if `arg` is not a stats group.
  virtual bool collect(std::string_view arg, stat_lines& out) = 0;
  virtual void reset() = 0;  // `stats reset`
  virtual void set_verbosity(uint32_t level) = 0;
};

enum class exec_action {
  Continue,  // go on with the next request
  Close,     // quit: flush the replies, then close the connection
  Shutdown   // shutdown (when enabled): flush, close, stop the server
};

// Where a batch's replies go when they outgrow kReplyHighWater before the
// batch is done: the TCP client writes them out (waiting for a slow reader,
// which is back-pressure on that one client); the UDP loop refuses (its
// reply cap is fixed by the frame's 16-bit datagram count). Returns false to
// stop the batch: the connection is then closed (TCP) or the reply dropped.
class reply_drain {
 public:
  virtual ~reply_drain() = default;
  virtual bool drain(protocol::out_buffer& out) = 0;
};

// A batch's replies are held to about this much before they are drained: a
// client cannot make the server copy "get k k k ..." (one value, a million
// times) into memory it never reads.
inline constexpr size_t kReplyHighWater = 1024 * 1024;

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

// Drains `out` through ctx.drain once it holds kReplyHighWater bytes. False
// if the drain refused or failed: stop executing and close.
bool drain_if_full(protocol::out_buffer& out, exec_context& ctx);

// Executes one request. Replies are appended to `out`.
exec_action execute(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx);

// Parses and executes every complete request in `input` with `parser` (which
// keeps its state across calls), appending the replies to `out`. Stops when
// the input is used up or ends in an incomplete request, or when a request
// asks to close or shut down (`action`). Returns the bytes consumed. Shared by
// the TCP client coroutine and the UDP datagram loop.
size_t execute_input(protocol::parser& parser, protocol::request& req, std::string_view input,
                     protocol::out_buffer& out, exec_context& ctx, exec_action& action);

// Handles a parser error: the reply (unless silent) and memcached's side
// effects (a `set` whose value was too large removes the old item).
exec_action execute_parse_error(const protocol::parse_result& result, const protocol::request& req,
                                protocol::out_buffer& out, exec_context& ctx);

}  // namespace ithaca::cache
