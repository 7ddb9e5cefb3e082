#include "pool_inspect.h"

#include <string>
#include <unordered_set>

#include <spdlog/spdlog.h>

#include "class_stats_merge.h"
#include "pool.h"
#include "reply_drain.h"
#include "server_query.h"

namespace ithaca::server {

namespace {

// "STAT name value\r\n" -> (name, value); false for any other line.
bool stat_line(std::string_view line, std::string& name, std::string& value) {
  if (!line.starts_with("STAT ")) return false;
  line.remove_prefix(5);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos) return false;
  name.assign(line.substr(0, space));
  value.assign(line.substr(space + 1));
  return true;
}

// The class list of a dump request, as memcached's lru_crawler reads it:
// "all" when every class is asked, else "1,2,...".
std::string class_word(const commands::class_set& classes) {
  bool every = true;
  for (std::size_t id = 1; id < classes.size(); ++id) every = every && classes.test(id);
  if (every) return "all";
  std::string word;
  for (std::size_t id = 1; id < classes.size(); ++id) {
    if (!classes.test(id)) continue;
    if (!word.empty()) word += ',';
    word += std::to_string(id);
  }
  return word;
}

}  // namespace

std::vector<const proxy::backend_server*> pool_inspect::servers() const {
  std::vector<const proxy::backend_server*> out;
  if (loop_.tree == nullptr) return out;
  std::unordered_set<std::string_view> seen;
  for (const auto& pool : loop_.tree->pools()) {
    for (const auto& s : pool->servers()) {
      if (seen.insert(s->address()).second) out.push_back(s.get());
    }
  }
  return out;
}

// `stats items` / `stats slabs`: every server's answer, merged.
bool pool_inspect::collect(std::string_view group, stats::stat_lines& out) {
  const std::string request = "stats " + std::string(group) + "\r\n";
  std::vector<stats::stat_lines> answers;
  for (const proxy::backend_server* s : servers()) {
    stats::stat_lines lines;
    std::string name, value;
    const proxy::query_result r = proxy::query_server(*s, request, "END\r\n", [&](std::string_view line) {
      if (stat_line(line, name, value)) lines.emplace_back(name, value);
      return true;
    });
    if (r.cancelled) return false;
    if (!r.ok) {
      spdlog::warn("stats {}: {}/{} left out: {}", group, s->pool(), s->address(), r.error);
      continue;
    }
    answers.push_back(std::move(lines));
  }
  if (answers.empty()) return false;
  out = stats::merge_class_stats(answers);
  return true;
}

// The dump: OK, every server's item lines as they come (their own OK and
// END left out), then END (metadump) or EN (mgdump). The lines go to the
// client through its drain as they pass the high-water mark, so a large
// pool is never held whole.
bool pool_inspect::dump(commands::dump_format format, const commands::class_set& classes, protocol::out_buffer& out) {
  const bool meta = format == commands::dump_format::Meta;
  const std::string request =
      std::string(meta ? "lru_crawler metadump " : "lru_crawler mgdump ") + class_word(classes) + "\r\n";
  const std::string_view end = meta ? "END\r\n" : "EN\r\n";
  out.append("OK\r\n");
  bool client_ok = true;
  for (const proxy::backend_server* s : servers()) {
    const int64_t give_up = mm::deadline_after(kBusyRetryMs);
    for (;;) {
      const proxy::query_result r = proxy::query_server(*s, request, end, [&](std::string_view line) {
        if (line == "OK\r\n") return true;  // memcached 1.6.45's first line
        out.append(line);
        client_ok = flow::drain_if_full(out, loop_.drain);
        return client_ok;
      });
      if (!client_ok || r.cancelled) return false;
      if (r.ok) break;
      // Another crawl runs on that server: it answers BUSY at once, ask again.
      if (r.error.find("BUSY") != std::string::npos && mm::millis_until(give_up) > 0 &&
          mm::sleep(50) != mm::wait_status::Cancelled) {
        continue;
      }
      spdlog::warn("lru_crawler {}: {}/{} left out: {}", meta ? "metadump" : "mgdump", s->pool(), s->address(),
                   r.error);
      break;
    }
  }
  out.append(end);
  return true;
}

bool pool_inspect::cachedump(unsigned cls, unsigned limit, protocol::out_buffer& out) {
  const std::string request = "stats cachedump " + std::to_string(cls) + " " + std::to_string(limit) + "\r\n";
  // memcached's buffer ends "END\r\n\0" within its 2 MB.
  constexpr std::size_t kBudget = commands::kCachedumpBytes - 6;
  std::size_t lines = 0;
  std::size_t bytes = 0;
  bool full = false;
  for (const proxy::backend_server* s : servers()) {
    if (full) break;
    // At most 2 MB in all: not drained mid-way (see store_dump::cachedump).
    const proxy::query_result r = proxy::query_server(*s, request, "END\r\n", [&](std::string_view line) {
      if ((limit != 0 && lines >= limit) || bytes + line.size() > kBudget) {
        full = true;
        return false;  // enough: the rest of this server's answer is not read
      }
      ++lines;
      bytes += line.size();
      full = limit != 0 && lines >= limit;
      out.append(line);
      return true;
    });
    if (r.cancelled) return false;
    if (!r.ok && !full) {
      spdlog::warn("stats cachedump: {}/{} left out: {}", s->pool(), s->address(), r.error);
    }
  }
  out.append("END\r\n");
  return true;
}

}  // namespace ithaca::server
