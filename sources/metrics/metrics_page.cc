#include "page_parts.h"

#include <cstdlib>

namespace ithaca::metrics {

lookup to_map(const stat_lines& lines) {
  lookup m;
  for (const auto& [k, v] : lines) m.emplace(k, v);
  return m;
}

bool to_number(const std::string& text, double& out) {
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && end != nullptr && *end == '\0';
}

bool number(const lookup& m, std::string_view key, double& out) {
  auto it = m.find(key);
  return it != m.end() && to_number(it->second, out);
}

namespace {

// "k=v,k=v" as labels, after `out`'s.
labels labels_of(std::string_view text, labels out) {
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view pair = text.substr(0, comma);
    const size_t eq = pair.find('=');
    out.emplace_back(std::string(pair.substr(0, eq)), std::string(pair.substr(eq + 1)));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  return out;
}

// memcached_exporter's sets: cmd_set counts cas commands too, which it subtracts.
bool sets_less_cas(const lookup& m, double set, double& out) {
  double hits = 0, misses = 0, badval = 0;
  if (!number(m, "cas_hits", hits) || !number(m, "cas_misses", misses) || !number(m, "cas_badval", badval)) {
    return false;
  }
  const double sets = set - hits - misses - badval;
  out = sets > 0 ? sets : 0;
  return true;
}

// The exporter's per class: a class has no cas misses, and it does not clamp.
bool class_sets_less_cas(const lookup& m, double set, double& out) {
  double hits = 0, badval = 0;
  if (!number(m, "cas_hits", hits) || !number(m, "cas_badval", badval)) return false;
  out = set - hits - badval;
  return true;
}

// A PerName row: a sample per line NAME<x>, labelled with x.
void add_per_name(prom_writer& w, const lookup& m, const stats::stat_row& r, metric_type type, const labels& first) {
  const std::string_view name = r.name;
  for (auto it = m.upper_bound(name); it != m.end() && it->first.starts_with(name); ++it) {
    double v = 0;
    if (!to_number(it->second, v)) continue;
    labels l = first;
    l.emplace_back(r.labels, it->first.substr(name.size()));
    w.add(r.prom, type, r.help, l, v);
  }
}

}  // namespace

void add_rows(prom_writer& w, const lookup& m, std::span<const stats::stat_row> rows, std::string_view prefix,
              const labels& first) {
  for (const stats::stat_row& r : rows) {
    if (r.type == stats::prom_type::None || !std::string_view(r.prom).starts_with(prefix)) continue;
    const metric_type type = r.type == stats::prom_type::Counter ? C : G;
    if (r.read == stats::page_read::PerName) {
      add_per_name(w, m, r, type, first);
      continue;
    }
    auto it = m.find(r.name);
    if (it == m.end()) continue;
    if (r.read == stats::page_read::Up) {
      w.add(r.prom, type, r.help, first, it->second == "up" ? 1 : 0);
      continue;
    }
    if (r.read == stats::page_read::Label) {
      labels l = first;
      l.emplace_back(r.labels, it->second);
      w.add(r.prom, type, r.help, l, 1);
      continue;
    }
    double v = 0;
    if (!to_number(it->second, v)) continue;
    switch (r.read) {
      case stats::page_read::Millis: v /= 1000; break;
      case stats::page_read::Micros: v /= 1e6; break;
      case stats::page_read::SetsLessCas:
        if (!sets_less_cas(m, v, v)) continue;
        break;
      case stats::page_read::ClassSetsLessCas:
        if (!class_sets_less_cas(m, v, v)) continue;
        break;
      default: break;
    }
    w.add(r.prom, type, r.help, labels_of(r.labels, first), v);
  }
}

std::string render_page(const page_input& in) {
  prom_writer w;
  memcached_families(w, in);
  ithaca_families(w, in);
  router_families(w, in);
  route_families(w, in);
  return w.render();
}

}  // namespace ithaca::metrics
