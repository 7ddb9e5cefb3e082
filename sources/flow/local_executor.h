// The local store as the request path sees it: what the `local` route (and
// later the l1l2 route) runs a request on. Implemented by the cache executor
// (cache/executor.h), one per connection; the request layer and the routes
// name only this interface, so they sit below the cache and a router that
// uses no store allocates none.
// Thread: the connection's coroutine. execute() may suspend (a value kept in
// a temp file is read through mm::blocking_call), never under a lock.
#pragma once

#include "exec_action.h"
#include "out_buffer.h"
#include "parse_result.h"
#include "request.h"

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
};

}  // namespace ithaca::flow
