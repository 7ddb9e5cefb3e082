// The reply to a request the parser refused, in both roles, with the two
// effects memcached has on the connection itself: a refused store counts in
// `stats detail`, and a text get refused for a long key drops the replies not
// yet sent. (The store's own side effect, a too-large `set` unlinking the old
// item, is the local executor's: local_executor::execute_parse_error.)
#pragma once

#include "exec_action.h"
#include "out_buffer.h"
#include "parse_result.h"
#include "request.h"

namespace ithaca::flow {

exec_action execute_parse_error_reply(const protocol::parse_result& result, const protocol::request& req,
                                      protocol::out_buffer& out);

}  // namespace ithaca::flow
