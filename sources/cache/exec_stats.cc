// `stats [group]` (text) and the binary Stat opcode. The numbers come from the
// server's stats_provider; this file only words the replies as memcached does.
#include <string_view>

#include "exec_internal.h"
#include "reply.h"

namespace ithaca::cache {

namespace {

constexpr std::string_view kReset = "reset";

exec_action binary_stats(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx) {
  if (req.args == kReset) {
    ctx.stats.reset();
    protocol::encode_binary_stat(out, req, {}, {});
    return exec_action::Continue;
  }
  stat_lines lines;
  if (!ctx.stats.collect(req.args, lines)) {
    protocol::encode_binary_error(out, req, protocol::binary_status::KeyNotFound);
    return exec_action::Continue;
  }
  // One packet per stat, then an empty one to end the reply.
  for (const auto& [name, value] : lines) protocol::encode_binary_stat(out, req, name, value);
  protocol::encode_binary_stat(out, req, {}, {});
  return exec_action::Continue;
}

}  // namespace

exec_action execute_stats(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx) {
  if (req.proto == protocol::protocol_kind::Binary) return binary_stats(req, out, ctx);
  if (req.args == kReset) {
    ctx.stats.reset();
    protocol::encode_ascii_line(out, "RESET");
    return exec_action::Continue;
  }
  stat_lines lines;
  if (!ctx.stats.collect(req.args, lines)) {
    // memcached answers an unknown group with a bare ERROR.
    protocol::encode_ascii_status(out, protocol::ascii_status::Error);
    return exec_action::Continue;
  }
  for (const auto& [name, value] : lines) protocol::encode_ascii_stat(out, name, value);
  protocol::encode_ascii_status(out, protocol::ascii_status::End);
  return exec_action::Continue;
}

}  // namespace ithaca::cache
