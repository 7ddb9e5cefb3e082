#include "executor.h"

#include "exec_internal.h"

namespace ithaca::cache {

exec_action execute(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx) {
  using protocol::command;
  if (req.proto == protocol::protocol_kind::Binary) return execute_binary(req, out, ctx);
  switch (req.cmd) {
    case command::MetaGet:
    case command::MetaSet:
    case command::MetaDelete:
    case command::MetaArithmetic:
    case command::MetaNoop:
    case command::MetaDebug:
      return execute_meta(req, out, ctx);
    case command::LeaseGet:
    case command::LeaseSet:
      return execute_lease(req, out, ctx);
    case command::Stats:
      return execute_stats(req, out, ctx);
    default:
      return execute_ascii(req, out, ctx);
  }
}

bool drain_if_full(protocol::out_buffer& out, exec_context& ctx) {
  if (out.size() < kReplyHighWater || !ctx.drain) return true;
  return ctx.drain->drain(out);
}

size_t execute_input(protocol::parser& parser, protocol::request& req, std::string_view input,
                     protocol::out_buffer& out, exec_context& ctx, exec_action& action) {
  size_t off = 0;
  while (action == exec_action::Continue && off < input.size()) {
    req.clear();
    protocol::parse_result r = parser.parse(input.substr(off), req);
    off += r.consumed;
    switch (r.status) {
      case protocol::parse_status::Ok:
        action = execute(req, out, ctx);
        if (action == exec_action::Continue && !drain_if_full(out, ctx)) action = exec_action::Close;
        break;
      case protocol::parse_status::NeedMore:
        return off;  // the rest is an incomplete request (or a value being swallowed)
      case protocol::parse_status::Error:
        ctx.counters.parse_errors.add();
        action = execute_parse_error(r, req, out, ctx);
        if (r.close) action = exec_action::Close;
        break;
    }
  }
  return off;
}

}  // namespace ithaca::cache
