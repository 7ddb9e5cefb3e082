// The local store as the request path sees it: what the `local` route (and
// the l1l2 route's L1) runs a request on. Implemented by the cache executor
// (cache/executor.h), one per connection; the request layer and the routes
// name only this interface, so they sit below the cache and a router that
// uses no store allocates none.
// Thread: the connection's coroutine. execute() may suspend (a value kept in
// a temp file is read through mm::blocking_call), never under a lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "exec_action.h"
#include "out_buffer.h"
#include "parse_result.h"
#include "request.h"
#include "routed_result.h"

namespace ithaca::flow {

class local_executor {
 public:
  virtual ~local_executor() = default;
  // Runs `req` on the store; its reply is appended to `out`.
  virtual exec_action execute(const protocol::request& req, protocol::out_buffer& out) = 0;
  // The reply to a refused request and memcached's side effect on the store
  // (a `set` whose value was too large removes the old item).
  virtual exec_action execute_parse_error(const protocol::parse_result& result, const protocol::request& req,
                                          protocol::out_buffer& out) = 0;

  // Before a pipelined batch runs: brings in what its lookups will touch
  // (protocol/lookahead_keys.h, store::prefetch). A hint; no effect on what
  // any request does.
  virtual void prefetch(std::string_view input) = 0;

  // The l1l2 route's L1 (routes/l1l2_route.h): plain store calls, no reply,
  // no command counters. Each takes a bucket lock only inside the store call.
  // lookup: `key`'s value as hit `index` of `result` (prepared for the
  // request); false on a miss. A value kept in a temp file is read here
  // (may suspend, after the lock is released).
  virtual bool lookup(std::string_view key, protocol::routed_result& result, std::size_t index) = 0;
  // Keeps `value` under `key` for `ttl` seconds (> 0), replacing what is there.
  virtual void fill(std::string_view key, std::uint32_t flags, std::string_view value, std::int64_t ttl) = 0;
  // Removes `key`, if present.
  virtual void invalidate(std::string_view key) = 0;
};

}  // namespace ithaca::flow
