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

void add_figures(prom_writer& w, const lookup& m, std::initializer_list<simple_figure> figures, const labels& l) {
  for (const simple_figure& f : figures) {
    double v = 0;
    if (number(m, f.key, v)) w.add(f.name, f.type, f.help, l, v);
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
