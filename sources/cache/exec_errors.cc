// A request the parser refused: its reply, and memcached's one side effect.
#include "exec_internal.h"
#include "exec_store.h"
#include "parse_error_reply.h"
#include "reply.h"

namespace ithaca::cache {

// The caller (the client coroutine) counts parse_errors, so this does not.
exec_action execute_parse_error(const protocol::parse_result& result, const protocol::request& req,
                                protocol::out_buffer& out, exec_context& ctx) {
  // A value over item_size_max never reaches the store, but a `set` of it
  // must still drop the old item, as memcached does (ascii set and binary
  // Set/SetQ only: checked against memcached 1.6.18).
  if (result.error == protocol::error_kind::TooLarge && req.cmd == protocol::command::Set && !req.key().empty()) {
    unlink_after_failed_set(store::store_status::TooLarge, req.key(), ctx);
  }
  return flow::execute_parse_error_reply(result, req, out);
}

}  // namespace ithaca::cache
