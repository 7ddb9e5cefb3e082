#include "executor.h"

#include "exec_internal.h"
#include "lookahead_keys.h"

namespace ithaca::cache {

exec_action execute(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx) {
  using protocol::command;
  if (req.proto == protocol::protocol_kind::Binary) return execute_binary(req, out, ctx);
  switch (req.cmd) {
    case command::MetaGet:
    case command::MetaSet:
    case command::MetaDelete:
    case command::MetaArithmetic:
    case command::MetaDebug: return execute_meta(req, out, ctx);
    case command::LeaseGet:
    case command::LeaseSet:
    case command::McMetaget: return execute_lease(req, out, ctx);
    default: return execute_ascii(req, out, ctx);
  }
}

exec_action exec_context::execute(const protocol::request& req, protocol::out_buffer& out) {
  return cache::execute(req, out, *this);
}

exec_action exec_context::execute_parse_error(const protocol::parse_result& result, const protocol::request& req,
                                              protocol::out_buffer& out) {
  return cache::execute_parse_error(result, req, out, *this);
}

// A batch of one request gains nothing: its lookup comes at once.
void exec_context::prefetch(std::string_view input) {
  std::string_view keys[32];
  const std::size_t n = protocol::lookahead_keys(input, keys);
  if (n > 1) store.prefetch(std::span<const std::string_view>(keys, n));
}

}  // namespace ithaca::cache
