// memcached_*: memcached_exporter's names, types and labels
// (pkg/exporter/exporter.go), from `stats`, `stats settings`, `stats items`
// and `stats slabs` (the per-class families: page_slabs.cc).

#include "general_stats.h"
#include "page_parts.h"
#include "settings_table.h"
#include "slab_stats_table.h"

namespace ithaca::metrics {

namespace {

// settings_table.h's rows: config, below stats/, cannot make them itself.
constexpr stats::stat_row kSettingsRows[] = {ITHACA_SETTINGS_STATS(ITHACA_STAT_ROW)};

void memcached_general(prom_writer& w, const lookup& s) {
  w.add("memcached_up", G, "Could the memcached server be reached.", {}, 1);
  add_rows(w, s, stats::kGeneralStats, "memcached_");
}

void memcached_settings(prom_writer& w, const lookup& settings) { add_rows(w, settings, kSettingsRows, "memcached_"); }

void memcached_slabs(prom_writer& w, const lookup& slabs) { add_rows(w, slabs, stats::kSlabTotalStats, "memcached_"); }
}  // namespace

void memcached_families(prom_writer& w, const page_input& in) {
  const lookup general = to_map(in.general);
  memcached_general(w, general);
  memcached_settings(w, to_map(in.settings));
  memcached_slabs(w, to_map(in.slabs));
  memcached_slab_families(w, in.items, in.slabs);
}

}  // namespace ithaca::metrics
