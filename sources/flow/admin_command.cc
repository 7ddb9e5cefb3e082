// memcached's operator commands for features ithaca does not have: `watch`,
// `lru tune|mode|temp_ttl`, `lru_crawler ...` (`slabs` is slabs_command.cc).
// Each answers exactly as memcached 1.6.18 does with the feature off
// (checked against `memcached -o no_lru_crawler,no_lru_maintainer,
// slab_reassign=false`-like answers in tests/functional/test_ascii_diff.py),
// so a client or tool that probes for them sees a consistent "not here":
//   - watch: no log stream. A watcher turns its connection into a one-way
//     stream fed from every worker's data path; that needs the client
//     coroutine's loop to change (being rewritten for the router role) and a
//     bounded per-watcher queue. "CLIENT_ERROR watch commands not allowed".
//   - lru tune: validated and accepted (OK), no effect (one CLOCK, no
//     segments); lru mode / temp_ttl: ERROR, as without the LRU maintainer.
//   - lru_crawler: the GC sweep does the crawler's expiry work on its own
//     period, so crawl / metadump say "lru crawler disabled", enable cannot
//     start one, disable, tocrawl and sleep are validated and accepted.
#include <string_view>
#include <vector>

#include "server_commands.h"
#include "number.h"
#include "reply.h"
#include "text_replies.h"

namespace ithaca::flow {

namespace {

using protocol::command;

constexpr uint32_t kMaxCrawlerSleepUs = 1000000;
constexpr uint32_t kMaxLruPct = 80;

std::vector<std::string_view> words_of(std::string_view args) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < args.size()) {
    while (i < args.size() && args[i] == ' ') ++i;
    const size_t start = i;
    while (i < args.size() && args[i] != ' ') ++i;
    if (i > start) words.push_back(args.substr(start, i - start));
  }
  return words;
}

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

exec_action execute_admin(const protocol::request& req, protocol::out_buffer& out) {
  const std::vector<std::string_view> w = words_of(req.args);
  bool noreply = false;
  std::string_view reply = protocol::kReplyError;
  switch (req.cmd) {
    case command::Watch:
      noreply = noreply_of(w);
      reply = protocol::kReplyWatchNotAllowed;
      break;
    case command::Lru: reply = lru(w, noreply); break;
    case command::LruCrawler: reply = lru_crawler(w); break;
    default: break;
  }
  if (!noreply) protocol::encode_ascii_line(out, reply);
  return exec_action::Continue;
}

}  // namespace ithaca::flow
