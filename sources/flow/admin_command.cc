// memcached's operator commands: `watch` (its words checked here; the client
// coroutine then becomes a watcher, server/watcher.h), and for features ithaca
// does not have, `lru tune|mode|temp_ttl`, `lru_crawler ...` (`slabs` is
// slabs_command.cc). Those answer exactly as memcached 1.6.18 does with the
// feature off (checked against `memcached -o no_lru_crawler,no_lru_maintainer`
// answers in tests/functional/test_ascii_diff.py), so a client or tool that
// probes for them sees a consistent "not here":
//   - watch: over UDP (no connection to stream to) memcached's refusal,
//     "CLIENT_ERROR watch commands not allowed"; a word naming no event kind
//     is "ERROR", as in memcached 1.6.45's process_watch_command, and so is
//     a watch behind replies of its batch not yet sent ("ERROR cannot
//     pipeline other commands before watch").
//   - lru tune: validated and accepted (OK), no effect (one CLOCK, no
//     segments); lru mode / temp_ttl: ERROR, as without the LRU maintainer.
//   - lru_crawler: the GC sweep does the crawler's expiry work on its own
//     period, so crawl / metadump say "lru crawler disabled", enable cannot
//     start one, disable, tocrawl and sleep are validated and accepted.
#include <string_view>
#include <vector>

#include "command_words.h"
#include "server_commands.h"
#include "number.h"
#include "reply.h"
#include "text_replies.h"
#include "watch_hub.h"

namespace ithaca::flow {

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

std::string_view lru_crawler(const std::vector<std::string_view>& w) {
  if (w.size() == 2) {
    if (w[0] == "crawl" || w[0] == "metadump") return protocol::kReplyLruCrawlerDisabled;
    if (w[0] == "tocrawl" || w[0] == "sleep") {
      const auto n = protocol::parse_strtoul32(w[1]);
      if (!n) return protocol::kReplyBadFormat;
      if (w[0] == "sleep" && *n > kMaxCrawlerSleepUs) return protocol::kReplyLruCrawlerSleep;
      return "OK";
    }
  }
  if (w.size() == 1 && w[0] == "enable") return protocol::kReplyLruCrawlerNoStart;
  if (w.size() == 1 && w[0] == "disable") return "OK";
  return protocol::kReplyError;
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
      if (!out.empty()) {
        reply = protocol::kReplyWatchPipelined;
        break;
      }
      const auto kinds = watch::parse_kinds(w);
      if (!kinds) break;  // ERROR
      // The client answers OK (or WATCHER_TOO_MANY) once it has a slot.
      ctx.watch_kinds = *kinds;
      return exec_action::Watch;
    }
    case command::Lru: reply = lru(w, noreply); break;
    case command::LruCrawler: reply = lru_crawler(w); break;
    default: break;
  }
  if (!noreply) protocol::encode_ascii_line(out, reply);
  return exec_action::Continue;
}

}  // namespace ithaca::flow
