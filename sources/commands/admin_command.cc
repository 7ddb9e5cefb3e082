// memcached's operator commands: `watch` (its words checked here; the client
// coroutine then becomes a watcher, server/watcher.h), `lru tune|mode|temp_ttl`
// and `lru_crawler ...` (`slabs` is slabs_command.cc):
//   - watch: over UDP (no connection to stream to) memcached's refusal,
//     "CLIENT_ERROR watch commands not allowed", and so with -W; a word naming
//     no event kind is "ERROR", as in memcached 1.6.45's process_watch_command,
//     and so is a watch behind replies of its batch not yet sent ("ERROR cannot
//     pipeline other commands before watch").
//   - lru tune: validated and accepted (OK), no effect (one CLOCK, no
//     segments); lru mode / temp_ttl: ERROR, as without the LRU maintainer
//     (checked against `memcached -o no_lru_maintainer` in test_ascii_diff.py).
//   - lru_crawler: memcached 1.6.45's answers (tests/functional/test_lru_crawler.py).
//     metadump and mgdump dump the local store (flow/item_dump.h); crawl
//     answers OK: the GC sweep (server/cron.cc) already reclaims expired
//     items on its own period, which is the crawl's work; enable / disable
//     switch the crawler commands on and off; tocrawl and sleep are validated
//     and accepted.
#include <atomic>
#include <optional>
#include <string_view>
#include <vector>

#include "command_words.h"
#include "server_commands.h"
#include "number.h"
#include "reply.h"
#include "text_replies.h"
#include "watch_hub.h"
#include "watch_kinds.h"

namespace ithaca::commands {

namespace {

using protocol::command;

constexpr uint32_t kMaxCrawlerSleepUs = 1000000;
constexpr uint32_t kMaxLruPct = 80;

// memcached's set_noreply_maybe: the last word is "noreply".
bool noreply_of(const std::vector<std::string_view>& w) { return !w.empty() && w.back() == "noreply"; }

std::string_view lru(const std::vector<std::string_view>& w, bool& noreply) {
  noreply = noreply_of(w);
  if (w.empty() || w[0] != "tune" || w.size() < 5) return protocol::kReplyError;
  const auto hot = protocol::parse_strtoul32(w[1]);
  const auto warm = protocol::parse_strtoul32(w[2]);
  const auto hot_factor = protocol::parse_f64(w[3]);
  const auto factor = protocol::parse_f64(w[4]);
  if (!hot || !warm || !hot_factor || !factor) return protocol::kReplyError;
  if (*hot + *warm > kMaxLruPct) return protocol::kReplyLruPcts;  // uint32 sum, as memcached
  if (*factor <= 0 || *hot_factor <= 0) return protocol::kReplyLruFactors;
  return "OK";
}

// The class list of crawl / metadump / mgdump (memcached's lru_crawler_crawl):
// "all", "hash" (walk the hash table: every class), or ids 1..63 separated by
// commas. nullopt: a bad id (BADCLASS).
std::optional<class_set> crawler_classes(std::string_view w, bool& hash) {
  class_set set;
  hash = w == "hash";
  if (w == "all" || hash) return set.set();
  while (!w.empty()) {
    const std::size_t comma = w.find(',');
    const std::string_view id = w.substr(0, comma);
    w = comma == std::string_view::npos ? std::string_view{} : w.substr(comma + 1);
    if (id.empty()) continue;  // strtok_r skips empty fields
    const auto n = protocol::parse_strtoul32(id);
    if (!n || *n < 1 || *n >= kCrawlerClassLimit) return std::nullopt;
    set.set(*n);
  }
  return set;
}

// metadump / mgdump: the answer is the dump itself (`reply` stays empty), or
// one of memcached's refusals.
exec_action crawler_dump(dump_format format, std::string_view classes_word, protocol::out_buffer& out,
                         server_context& ctx, std::string_view& reply) {
  const bool meta = format == dump_format::Meta;
  if (!ctx.dump_enabled) {
    reply = meta ? protocol::kReplyMetadumpNotAllowed : protocol::kReplyMgdumpNotAllowed;
    return exec_action::Continue;
  }
  // memcached 1.6.45: replies of the same batch not yet sent.
  if (!out.empty() || ctx.replies_pending) {
    reply = meta ? protocol::kReplyMetadumpPipelined : protocol::kReplyMgdumpPipelined;
    return exec_action::Continue;
  }
  bool hash = false;
  const auto classes = crawler_classes(classes_word, hash);
  if (!classes) {
    reply = protocol::kReplyCrawlerBadClass;
    return exec_action::Continue;
  }
  if (ctx.items == nullptr) {
    reply = protocol::kReplyCrawlerUnknown;
    return exec_action::Continue;
  }
  reply = {};
  return ctx.items->dump(format, *classes, out) ? exec_action::Continue : exec_action::Close;
}

exec_action lru_crawler(const std::vector<std::string_view>& w, protocol::out_buffer& out, server_context& ctx,
                        std::string_view& reply) {
  reply = protocol::kReplyError;
  std::atomic<bool>& enabled = crawler_enabled();
  if (w.size() == 2 && (w[0] == "crawl" || w[0] == "metadump" || w[0] == "mgdump")) {
    if (!enabled.load(std::memory_order_relaxed)) {
      reply = protocol::kReplyLruCrawlerDisabled;
      return exec_action::Continue;
    }
    if (w[0] == "metadump") return crawler_dump(dump_format::Meta, w[1], out, ctx, reply);
    if (w[0] == "mgdump") return crawler_dump(dump_format::Mg, w[1], out, ctx, reply);
    bool hash = false;
    const auto classes = crawler_classes(w[1], hash);
    // memcached walks the hash table only for the dumps.
    reply = !classes ? protocol::kReplyCrawlerBadClass : hash ? protocol::kReplyCrawlerUnknown : "OK";
    return exec_action::Continue;
  }
  if (w.size() == 2 && (w[0] == "tocrawl" || w[0] == "sleep")) {
    const auto n = protocol::parse_strtoul32(w[1]);
    if (!n) {
      reply = protocol::kReplyBadFormat;
    } else if (w[0] == "sleep" && *n > kMaxCrawlerSleepUs) {
      reply = protocol::kReplyLruCrawlerSleep;
    } else {
      reply = "OK";
    }
    return exec_action::Continue;
  }
  if (w.size() == 1 && w[0] == "enable") {
    // memcached fails to start a second crawler thread.
    reply = enabled.exchange(true) ? protocol::kReplyLruCrawlerNoStart : "OK";
  } else if (w.size() == 1 && w[0] == "disable") {
    enabled.store(false);
    reply = "OK";
  }
  return exec_action::Continue;
}

}  // namespace

exec_action execute_admin(const protocol::request& req, protocol::out_buffer& out, server_context& ctx) {
  const std::vector<std::string_view> w = words_of(req.args);
  bool noreply = false;
  std::string_view reply = protocol::kReplyError;
  switch (req.cmd) {
    case command::Watch: {
      if (!ctx.can_watch) {
        reply = protocol::kReplyWatchNotAllowed;
        break;
      }
      // memcached 1.6.45: replies of the same batch not yet sent.
      if (!out.empty() || ctx.replies_pending) {
        reply = protocol::kReplyWatchPipelined;
        break;
      }
      const auto kinds = parse_watch_kinds(w);
      if (!kinds) break;  // ERROR
      // The client answers OK (or WATCHER_TOO_MANY) once it has a slot.
      ctx.watch_kinds = *kinds;
      return exec_action::Watch;
    }
    case command::Lru: reply = lru(w, noreply); break;
    case command::LruCrawler: {
      const exec_action a = lru_crawler(w, out, ctx, reply);
      if (a != exec_action::Continue) return a;
      break;
    }
    default: break;
  }
  if (!noreply && !reply.empty()) protocol::encode_ascii_line(out, reply);
  return exec_action::Continue;
}

}  // namespace ithaca::commands
