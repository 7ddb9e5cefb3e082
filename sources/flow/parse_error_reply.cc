#include "parse_error_reply.h"

#include "command_class.h"
#include "prefix_stats.h"
#include "reply.h"

namespace ithaca::flow {

exec_action execute_parse_error_reply(const protocol::parse_result& result, const protocol::request& req,
                                      protocol::out_buffer& out) {
  // memcached counts a refused store in the per-prefix stats (it records
  // the set before it finds the value too large); meta commands never count.
  if (result.error == protocol::error_kind::TooLarge && req.proto != protocol::protocol_kind::Meta &&
      !req.key().empty()) {
    stats::prefix_stats::instance().record_set(req.key());
  }
  // A text get refused for a key over 250 bytes: memcached drops every reply
  // it has not transmitted yet (those since the last get), then answers.
  if (result.error == protocol::error_kind::KeyTooLong && protocol::is_multikey_retrieval(req)) {
    out.drop_unsent();
  }
  protocol::encode_parse_error(out, result, req);
  return result.close ? exec_action::Close : exec_action::Continue;
}

}  // namespace ithaca::flow
