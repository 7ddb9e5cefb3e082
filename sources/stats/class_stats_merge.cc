#include "class_stats_merge.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ithaca::stats {

namespace {

// "items:12:number" -> {"items:", 12, "number"}; "12:chunk_size" -> {"", 12, ...}.
struct class_key {
  std::string prefix;
  unsigned id = 0;
  std::string field;
};

std::optional<class_key> split(std::string_view name) {
  std::string_view prefix;
  if (name.starts_with("items:")) {
    prefix = "items:";
    name.remove_prefix(prefix.size());
  }
  const std::size_t colon = name.find(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  unsigned id = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + colon, id);
  if (ec != std::errc() || end != name.data() + colon) return std::nullopt;
  return class_key{std::string(prefix), id, std::string(name.substr(colon + 1))};
}

std::optional<uint64_t> number(std::string_view v) {
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return n;
}

enum class rule { Sum, Max, RecentEviction };

rule rule_of(std::string_view field) {
  if (field == "chunk_size" || field == "chunks_per_page" || field == "age" || field == "age_hot" ||
      field == "age_warm")
    return rule::Max;
  if (field == "evicted_time") return rule::RecentEviction;
  return rule::Sum;
}

// One merged figure.
struct figure {
  std::string text;  // the first server's value (kept when not a number)
  bool numeric = true;
  uint64_t value = 0;
  bool seen = false;  // RecentEviction: some server's class has evicted
};

void fold(figure& f, rule r, std::string_view text, bool evicted, bool first) {
  const std::optional<uint64_t> n = number(text);
  if (first) f.text = std::string(text);
  if (!n) {
    f.numeric = false;
    return;
  }
  switch (r) {
    case rule::Sum: f.value += *n; break;
    case rule::Max: f.value = std::max(f.value, *n); break;
    case rule::RecentEviction:
      if (first) f.value = *n;  // kept while no server's class has evicted
      if (evicted) {
        f.value = f.seen ? std::min(f.value, *n) : *n;
        f.seen = true;
      }
      break;
  }
}

std::string shown(const figure& f) { return f.numeric ? std::to_string(f.value) : f.text; }

}  // namespace

stat_lines merge_class_stats(const std::vector<stat_lines>& answers) {
  struct merged_class {
    std::string prefix;
    std::vector<std::string> order;
    std::map<std::string, figure, std::less<>> figures;
  };
  std::map<unsigned, merged_class> classes;
  std::vector<std::string> global_order;
  std::map<std::string, figure, std::less<>> globals;
  for (const stat_lines& answer : answers) {
    // A class's evicted count on this server, for its evicted_time.
    std::map<unsigned, uint64_t> evicted;
    for (const auto& [name, value] : answer) {
      const auto k = split(name);
      if (k && k->field == "evicted") evicted[k->id] = number(value).value_or(0);
    }
    for (const auto& [name, value] : answer) {
      const auto k = split(name);
      if (!k) {
        auto [it, added] = globals.try_emplace(name);
        if (added) global_order.push_back(name);
        fold(it->second, rule::Sum, value, false, added);
        continue;
      }
      merged_class& c = classes[k->id];
      if (c.order.empty()) c.prefix = k->prefix;
      auto [it, added] = c.figures.try_emplace(k->field);
      if (added) c.order.push_back(k->field);
      fold(it->second, rule_of(k->field), value, evicted[k->id] > 0, added);
    }
  }
  stat_lines out;
  for (const auto& [id, c] : classes) {
    for (const std::string& field : c.order) {
      out.emplace_back(c.prefix + std::to_string(id) + ":" + field, shown(c.figures.find(field)->second));
    }
  }
  for (const std::string& name : global_order) {
    const figure& f = globals.find(name)->second;
    out.emplace_back(name, name == "active_slabs" ? std::to_string(classes.size()) : shown(f));
  }
  return out;
}

}  // namespace ithaca::stats
