#include "prefix_stats.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace ithaca::stats {

prefix_stats& prefix_stats::instance() {
  static prefix_stats table;
  return table;
}

prefix_stats::counts* prefix_stats::find(std::string_view key) {
  const size_t end = key.find(delimiter());
  if (end == std::string_view::npos) return nullptr;
  const std::string prefix(key.substr(0, end));
  auto it = table_.find(prefix);
  if (it != table_.end()) return &it->second;
  if (table_.size() >= kMaxPrefixes) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  return &table_.emplace(prefix, counts{}).first->second;
}

void prefix_stats::count_get(std::string_view key, bool hit) {
  std::lock_guard lock(mutex_);
  if (counts* c = find(key)) {
    ++c->gets;
    if (hit) ++c->hits;
  }
}

void prefix_stats::count_set(std::string_view key) {
  std::lock_guard lock(mutex_);
  if (counts* c = find(key)) ++c->sets;
}

void prefix_stats::count_delete(std::string_view key) {
  std::lock_guard lock(mutex_);
  if (counts* c = find(key)) ++c->deletes;
}

std::string prefix_stats::dump() {
  std::vector<std::pair<std::string, counts>> rows;
  {
    std::lock_guard lock(mutex_);
    rows.assign(table_.begin(), table_.end());
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [prefix, c] : rows) {
    out += fmt::format("PREFIX {} get {} hit {} set {} del {}\r\n", prefix, c.gets, c.hits, c.sets, c.deletes);
  }
  out += "END\r\n";
  return out;
}

void prefix_stats::clear() {
  std::lock_guard lock(mutex_);
  table_.clear();
}

}  // namespace ithaca::stats
