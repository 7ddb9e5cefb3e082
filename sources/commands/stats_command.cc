// `stats [group]` (text) and the binary Stat opcode. The numbers come from the
// server's stats_provider; this file only words the replies as memcached does.
#include <string_view>
#include <vector>

#include "command_words.h"
#include "server_commands.h"
#include "service_info.h"
#include "number.h"
#include "prefix_stats.h"
#include "reply.h"
#include "text_replies.h"

namespace ithaca::commands {

namespace {

constexpr std::string_view kReset = "reset";
constexpr std::string_view kDetail = "detail";
constexpr std::string_view kSettings = "settings";
constexpr std::string_view kCachedump = "cachedump";

// A stats group's lines: the pools' servers answer `items` and `slabs` for a
// connection whose requests go to pools (pool_stats.h), the server the rest.
bool collect(server_context& ctx, std::string_view group, stat_lines& lines) {
  if (ctx.pool_stats != nullptr && (group == "items" || group == "slabs") && ctx.pool_stats->collect(group, lines)) {
    return true;
  }
  lines.clear();
  return ctx.stats.collect(group, lines);
}

// `stats detail on|off|dump` (memcached: at least one word after "detail",
// and only the first one counts).
void stats_detail(std::string_view args, protocol::out_buffer& out) {
  std::string_view rest = args.substr(kDetail.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  const std::string_view word = rest.substr(0, rest.find(' '));
  stats::prefix_stats& table = stats::prefix_stats::instance();
  if (word == "on" || word == "off") {
    table.set_enabled(word == "on");
    protocol::encode_ascii_status(out, protocol::ascii_status::Ok);
  } else if (word == "dump") {
    out.append(table.dump());
  } else {
    protocol::encode_ascii_line(out, protocol::kReplyStatsDetailUsage);
  }
}

// The group word: `stats detail ...` and `stats cachedump ...` take arguments.
bool is_group(std::string_view args, std::string_view group) {
  return args.starts_with(group) && (args.size() == group.size() || args[group.size()] == ' ');
}

// `stats cachedump CLASS LIMIT`, memcached 1.6.45's checks in its order: -X,
// the word count, the numbers, the class id (0..63; a class with no items,
// 0 among them, answers END); then the dump of the local store, or through
// the router the pools' (item_dump.h). An ithaca-ism: the answer is the items
// of the class most recently stored first, as memcached's COLD LRU lists them.
exec_action stats_cachedump(std::string_view args, protocol::out_buffer& out, server_context& ctx) {
  if (!ctx.dump_enabled) {
    protocol::encode_ascii_line(out, protocol::kReplyCachedumpNotAllowed);
    return exec_action::Continue;
  }
  const std::vector<std::string_view> w = words_of(args);  // "cachedump", CLASS, LIMIT, ...
  if (w.size() < 3) {
    protocol::encode_ascii_line(out, protocol::kReplyBadCommandLine);
    return exec_action::Continue;
  }
  const auto id = protocol::parse_strtoul32(w[1]);
  const auto limit = protocol::parse_strtoul32(w[2]);
  if (!id || !limit) {
    protocol::encode_ascii_line(out, protocol::kReplyBadFormat);
    return exec_action::Continue;
  }
  if (*id >= kCrawlerClassLimit) {
    protocol::encode_ascii_line(out, protocol::kReplyIllegalSlabId);
    return exec_action::Continue;
  }
  if (ctx.items == nullptr) {  // no stream to dump to (UDP): memcached's empty dump
    protocol::encode_ascii_status(out, protocol::ascii_status::End);
    return exec_action::Continue;
  }
  return ctx.items->cachedump(*id, *limit, out) ? exec_action::Continue : exec_action::Close;
}

// Binary `detail on|off|dump`, the key's bytes after "detail" (memcached's
// process_bin_stat compares them with strncmp: they must begin " dump", " on"
// or " off", so " onion" turns detail on and "  on" or a bare "detail" is
// KEY_ENOENT). on/off answer the empty stat that ends every stat reply; dump
// answers one stat named "detailed" whose value is the whole text dump
// ("PREFIX ...\r\n" lines and "END\r\n"), then that empty stat.
void binary_stats_detail(const protocol::request& req, std::string_view rest, protocol::out_buffer& out,
                         const server_context& ctx) {
  stats::prefix_stats& table = stats::prefix_stats::instance();
  if (!ctx.dump_enabled) {  // memcached 1.6.45 -X
    protocol::encode_binary_error(out, req, protocol::binary_status::KeyNotFound);
    return;
  }
  if (rest.starts_with(" dump")) {
    protocol::encode_binary_stat(out, req, "detailed", table.dump());
  } else if (rest.starts_with(" on")) {
    table.set_enabled(true);
  } else if (rest.starts_with(" off")) {
    table.set_enabled(false);
  } else {
    protocol::encode_binary_error(out, req, protocol::binary_status::KeyNotFound);
    return;
  }
  protocol::encode_binary_stat(out, req, {}, {});
}

// memcached's process_bin_stat takes "reset", "settings" and "detail" as
// prefixes of the key (strncmp with the word's length: "resetx" resets,
// "settingsx" lists the settings); every other group must match whole.
exec_action binary_stats(const protocol::request& req, protocol::out_buffer& out, server_context& ctx) {
  const std::string_view key = req.args;
  if (key.starts_with(kReset)) {
    ctx.stats.reset();
    stats::prefix_stats::instance().clear();
    protocol::encode_binary_stat(out, req, {}, {});
    return exec_action::Continue;
  }
  if (key.starts_with(kDetail)) {
    binary_stats_detail(req, key.substr(kDetail.size()), out, ctx);
    return exec_action::Continue;
  }
  stat_lines lines;
  if (!collect(ctx, key.starts_with(kSettings) ? kSettings : key, lines)) {
    protocol::encode_binary_error(out, req, protocol::binary_status::KeyNotFound);
    return exec_action::Continue;
  }
  // One packet per stat, then an empty one to end the reply.
  for (const auto& [name, value] : lines) protocol::encode_binary_stat(out, req, name, value);
  protocol::encode_binary_stat(out, req, {}, {});
  return exec_action::Continue;
}

// mcrouter's stats groups (its stats.cpp) that ithaca's server does not
// name, for a connection served by an mcrouter config: detailed, ods and
// count are parts of mcrouter's `all`, answered with ithaca's `all` lines;
// cmd-error and external are counters ithaca does not keep (mcrouter's
// per-command errors, its host application's), answered with none. Any
// other group is the server's own.
std::string_view mcrouter_group(std::string_view group) {
  if (group == "detailed" || group == "ods" || group == "count") return "all";
  // mcrouter's one line per destination (server/mcrouter_servers.h);
  // ithaca's per-server lines stay under `stats ithaca_servers`.
  if (group == "servers") return "mcrouter_servers";
  return group;
}
bool mcrouter_empty_group(std::string_view group) { return group == "cmd-error" || group == "external"; }

}  // namespace

exec_action execute_stats(const protocol::request& req, protocol::out_buffer& out, server_context& ctx) {
  if (req.proto == protocol::protocol_kind::Binary) return binary_stats(req, out, ctx);
  if (req.args == kReset) {
    ctx.stats.reset();
    stats::prefix_stats::instance().clear();  // memcached's stats_reset clears them too
    protocol::encode_ascii_line(out, "RESET");
    return exec_action::Continue;
  }
  if (is_group(req.args, kDetail)) {
    if (ctx.dump_enabled) {
      stats_detail(req.args, out);
    } else {
      protocol::encode_ascii_line(out, protocol::kReplyDetailNotAllowed);  // memcached 1.6.45 -X
    }
    return exec_action::Continue;
  }
  if (is_group(req.args, kCachedump)) return stats_cachedump(req.args, out, ctx);
  const bool mcrouter = ctx.info != nullptr && ctx.info->mcrouter;
  stat_lines lines;
  if (mcrouter && mcrouter_empty_group(req.args)) {
    protocol::encode_ascii_status(out, protocol::ascii_status::End);
    return exec_action::Continue;
  }
  if (!collect(ctx, mcrouter ? mcrouter_group(req.args) : req.args, lines)) {
    // memcached answers an unknown group with a bare ERROR; mcrouter with
    // its stats_reply's CLIENT_ERROR.
    if (mcrouter) {
      protocol::encode_ascii_line(out, protocol::kReplyBadStatsCommand);
    } else {
      protocol::encode_ascii_status(out, protocol::ascii_status::Error);
    }
    return exec_action::Continue;
  }
  for (const auto& [name, value] : lines) protocol::encode_ascii_stat(out, name, value);
  protocol::encode_ascii_status(out, protocol::ascii_status::End);
  return exec_action::Continue;
}

}  // namespace ithaca::commands
