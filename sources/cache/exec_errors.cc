// A request the parser refused: its reply, and memcached's one side effect.
#include "exec_internal.h"
#include "exec_store.h"
#include "prefix_stats.h"
#include "reply.h"

namespace ithaca::cache {

namespace {
bool is_text_get(protocol::command cmd) {
  using protocol::command;
  return cmd == command::Get || cmd == command::Gets || cmd == command::Gat || cmd == command::Gats;
}
}  // namespace

exec_action execute_parse_error_reply(const protocol::parse_result& result, const protocol::request& req,
                                      protocol::out_buffer& out) {
  // memcached counts a refused store in the per-prefix stats (it records
  // the set before it finds the value too large); meta commands never count.
  if (result.error == protocol::error_kind::TooLarge && req.proto != protocol::protocol_kind::Meta &&
      !req.key().empty()) {
    prefix_stats::instance().record_set(req.key());
  }
  // A text get refused for a key over 250 bytes: memcached drops every reply
  // it has not transmitted yet (those since the last get), then answers.
  if (result.error == protocol::error_kind::KeyTooLong && req.proto == protocol::protocol_kind::Ascii &&
      is_text_get(req.cmd)) {
    out.drop_unsent();
  }
  protocol::encode_parse_error(out, result, req);
  return result.close ? exec_action::Close : exec_action::Continue;
}

// The caller (the client coroutine) counts parse_errors, so this does not.
exec_action execute_parse_error(const protocol::parse_result& result, const protocol::request& req,
                                protocol::out_buffer& out, exec_context& ctx) {
  // A value over item_size_max never reaches the store, but a `set` of it
  // must still drop the old item, as memcached does (ascii set and binary
  // Set/SetQ only: checked against memcached 1.6.18).
  if (result.error == protocol::error_kind::TooLarge && req.cmd == protocol::command::Set &&
      !req.key().empty()) {
    unlink_after_failed_set(store::store_status::TooLarge, req.key(), ctx);
  }
  return execute_parse_error_reply(result, req, out);
}

}  // namespace ithaca::cache
