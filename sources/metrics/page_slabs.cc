// memcached_slab_*: memcached_exporter's per-class families (label `slab`),
// from `stats items` (items:CLASS:FIELD) and `stats slabs` (CLASS:FIELD), one
// per row of stats/item_stats_table.h and stats/slab_stats_table.h that has a
// family.
#include <map>
#include <string>
#include <string_view>

#include "item_stats_table.h"
#include "page_parts.h"
#include "slab_stats_table.h"

namespace ithaca::metrics {

namespace {

// Lines "PREFIX<class>:<field>" grouped by class (numeric order), field -> value.
using by_class = std::map<unsigned, lookup>;

by_class group(const stat_lines& lines, std::string_view prefix) {
  by_class out;
  for (const auto& [key, value] : lines) {
    if (key.rfind(prefix, 0) != 0) continue;
    const size_t colon = key.find(':', prefix.size());
    if (colon == std::string::npos || colon == prefix.size()) continue;
    const std::string id = key.substr(prefix.size(), colon - prefix.size());
    if (id.find_first_not_of("0123456789") != std::string::npos) continue;
    out[static_cast<unsigned>(std::stoul(id))].emplace(key.substr(colon + 1), value);
  }
  return out;
}

}  // namespace

void memcached_slab_families(prom_writer& w, const stat_lines& items, const stat_lines& slabs) {
  for (const auto& [id, m] : group(items, "items:")) {
    add_rows(w, m, stats::kItemStats, "memcached_", {{"slab", std::to_string(id)}});
  }
  for (const auto& [id, m] : group(slabs, "")) {
    add_rows(w, m, stats::kSlabClassStats, "memcached_", {{"slab", std::to_string(id)}});
  }
}

}  // namespace ithaca::metrics
