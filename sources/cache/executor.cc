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

}  // namespace ithaca::cache
