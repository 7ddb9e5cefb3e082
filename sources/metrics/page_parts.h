// Helpers shared by the page's parts (page_memcached.cc, page_ithaca.cc,
// page_router.cc, page_routes.cc): stat lines as a map, numbers out of them, and the
// one-stat-one-family table. Pure. [any thread]
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>

#include "metrics_page.h"
#include "prom_writer.h"
#include "stat_row.h"

namespace ithaca::metrics {

using lookup = std::map<std::string, std::string, std::less<>>;

lookup to_map(const stat_lines& lines);
// A stat's value as a number: false if absent or not a number.
bool number(const lookup& m, std::string_view key, double& out);
bool to_number(const std::string& text, double& out);

// A one-to-one figure: stat `key` as family `name` (page_routes.cc's async_*).
struct simple_figure {
  const char* key;
  const char* name;
  metric_type type;
  const char* help;
};
// The families of a counter group's table (stats/stat_row.h) whose name starts
// with `prefix`, each from the stat line of its row, if present, with the
// labels `first` (a size class's `slab`) before the row's.
void add_rows(prom_writer& w, const lookup& m, std::span<const stats::stat_row> rows, std::string_view prefix,
              const labels& first = {});

inline constexpr auto C = metric_type::Counter;
inline constexpr auto G = metric_type::Gauge;

// The parts, in page order.
void memcached_families(prom_writer& w, const page_input& in);  // page_memcached.cc
// memcached_slab_*, per class (page_slabs.cc); called by memcached_families.
void memcached_slab_families(prom_writer& w, const stat_lines& items, const stat_lines& slabs);
void ithaca_families(prom_writer& w, const page_input& in);  // page_ithaca.cc
void router_families(prom_writer& w, const page_input& in);  // page_router.cc
void route_families(prom_writer& w, const page_input& in);   // page_routes.cc

}  // namespace ithaca::metrics
