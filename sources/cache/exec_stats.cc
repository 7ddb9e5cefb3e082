// `stats [group]` (text) and the binary Stat opcode. The numbers come from the
// server's stats_provider; this file only words the replies as memcached does.
#include <string_view>

#include "exec_internal.h"
#include "prefix_stats.h"
#include "reply.h"
#include "text_replies.h"

namespace ithaca::cache {

namespace {

constexpr std::string_view kReset = "reset";
constexpr std::string_view kDetail = "detail";

// `stats detail on|off|dump` (memcached: at least one word after "detail",
// and only the first one counts).
void stats_detail(std::string_view args, protocol::out_buffer& out) {
  std::string_view rest = args.substr(kDetail.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  const std::string_view word = rest.substr(0, rest.find(' '));
  prefix_stats& table = prefix_stats::instance();
  if (word == "on" || word == "off") {
    table.set_enabled(word == "on");
    protocol::encode_ascii_status(out, protocol::ascii_status::Ok);
  } else if (word == "dump") {
    out.append(table.dump());
  } else {
    protocol::encode_ascii_line(out, protocol::kReplyStatsDetailUsage);
  }
}

bool is_detail(std::string_view args) {
  return args.starts_with(kDetail) && (args.size() == kDetail.size() || args[kDetail.size()] == ' ');
}

exec_action binary_stats(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx) {
  if (req.args == kReset) {
    ctx.stats.reset();
    prefix_stats::instance().clear();
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
    prefix_stats::instance().clear();  // memcached's stats_reset clears them too
    protocol::encode_ascii_line(out, "RESET");
    return exec_action::Continue;
  }
  if (is_detail(req.args)) {
    stats_detail(req.args, out);
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
