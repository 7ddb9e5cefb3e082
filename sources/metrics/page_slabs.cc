// memcached_slab_*: memcached_exporter's per-class families (pkg/exporter/exporter.go,
// label `slab`), from `stats items` (items:CLASS:FIELD) and `stats slabs` (CLASS:FIELD),
// with the exporter's names, types and help texts (its typos included, so a dashboard
// that shows the help shows the same).
#include <map>
#include <string>
#include <string_view>

#include "page_parts.h"

namespace ithaca::metrics {

namespace {

struct class_figure {
  const char* field;
  const char* name;
  metric_type type;
  const char* help;
};

// The exporter's itemsNumber, itemsAge, itemsCounterMetrics and itemsGaugeMetrics.
constexpr class_figure kItemFigures[] = {
    {"number", "memcached_slab_current_items", G, "Number of items currently stored in this slab class."},
    {"age", "memcached_slab_items_age_seconds", G, "Number of seconds the oldest item has been in the slab class."},
    {"crawler_reclaimed", "memcached_slab_items_crawler_reclaimed_total", C, "Number of items freed by the LRU Crawler."},
    {"evicted", "memcached_slab_items_evicted_total", C,
     "Total number of times an item had to be evicted from the LRU before it expired."},
    {"evicted_nonzero", "memcached_slab_items_evicted_nonzero_total", C,
     "Total number of times an item which had an explicit expire time set had to be evicted from the LRU before it "
     "expired."},
    {"evicted_time", "memcached_slab_items_evicted_time_seconds", C,
     "Seconds since the last access for the most recent item evicted from this class."},
    {"evicted_unfetched", "memcached_slab_items_evicted_unfetched_total", C,
     "Total nmber of items evicted and never fetched."},
    {"expired_unfetched", "memcached_slab_items_expired_unfetched_total", C,
     "Total number of valid items evicted from the LRU which were never touched after being set."},
    {"outofmemory", "memcached_slab_items_outofmemory_total", C,
     "Total number of items for this slab class that have triggered an out of memory error."},
    {"reclaimed", "memcached_slab_items_reclaimed_total", C, "Total number of items reclaimed."},
    {"tailrepairs", "memcached_slab_items_tailrepairs_total", C,
     "Total number of times the entries for a particular ID need repairing."},
    {"mem_requested", "memcached_slab_mem_requested_bytes", C,
     "Number of bytes of memory actual items take up within a slab."},
    {"moves_to_cold", "memcached_slab_items_moves_to_cold", C, "Number of items moved from HOT or WARM into COLD."},
    {"moves_to_warm", "memcached_slab_items_moves_to_warm", C, "Number of items moves from COLD into WARM."},
    {"moves_within_lru", "memcached_slab_items_moves_within_lru", C,
     "Number of times active items were bumped within HOT or WARM."},
    {"number_hot", "memcached_slab_hot_items", G, "Number of items presently stored in the HOT LRU."},
    {"number_warm", "memcached_slab_warm_items", G, "Number of items presently stored in the WARM LRU."},
    {"number_cold", "memcached_slab_cold_items", G, "Number of items presently stored in the COLD LRU."},
    {"number_temp", "memcached_slab_temporary_items", G, "Number of items presently stored in the TEMPORARY LRU."},
    {"age_hot", "memcached_slab_hot_age_seconds", G, "Age of the oldest item in HOT LRU."},
    {"age_warm", "memcached_slab_warm_age_seconds", G, "Age of the oldest item in HOT LRU."},
};

constexpr std::pair<const char*, const char*> kLruHits[] = {
    {"hits_to_hot", "hot"}, {"hits_to_warm", "warm"}, {"hits_to_cold", "cold"}, {"hits_to_temp", "temporary"}};

constexpr class_figure kSlabFigures[] = {
    {"chunk_size", "memcached_slab_chunk_size_bytes", G,
     "Number of bytes allocated to each chunk within this slab class."},
    {"chunks_per_page", "memcached_slab_chunks_per_page", G,
     "Number of chunks within a single page for this slab class."},
    {"total_pages", "memcached_slab_current_pages", G, "Number of pages allocated to this slab class."},
    {"total_chunks", "memcached_slab_current_chunks", G, "Number of chunks allocated to this slab class."},
    {"used_chunks", "memcached_slab_chunks_used", G, "Number of chunks allocated to an item."},
    {"free_chunks", "memcached_slab_chunks_free", G, "Number of chunks not yet allocated items."},
    {"free_chunks_end", "memcached_slab_chunks_free_end", G,
     "Number of free chunks at the end of the last allocated page."},
};

constexpr const char* kCommandsHelp =
    "Total number of all requests broken down by command (get, set, etc.) and status per slab.";

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

void add_class_figures(prom_writer& w, const lookup& m, const std::string& slab, const class_figure* first,
                       const class_figure* last) {
  double v = 0;
  for (const class_figure* f = first; f != last; ++f) {
    if (number(m, f->field, v)) w.add(f->name, f->type, f->help, {{"slab", slab}}, v);
  }
}

}  // namespace

void memcached_slab_families(prom_writer& w, const stat_lines& items, const stat_lines& slabs) {
  double v = 0;
  for (const auto& [id, m] : group(items, "items:")) {
    const std::string slab = std::to_string(id);
    add_class_figures(w, m, slab, std::begin(kItemFigures), std::end(kItemFigures));
    for (const auto& [field, lru] : kLruHits) {
      if (number(m, field, v)) {
        w.add("memcached_slab_lru_hits_total", C, "Number of get_hits to the LRU.", {{"slab", slab}, {"lru", lru}}, v);
      }
    }
  }
  for (const auto& [id, m] : group(slabs, "")) {
    const std::string slab = std::to_string(id);
    for (const char* op : {"get", "delete", "incr", "decr", "cas", "touch"}) {
      if (number(m, std::string(op) + "_hits", v)) {
        w.add("memcached_slab_commands_total", C, kCommandsHelp, {{"slab", slab}, {"command", op}, {"status", "hit"}}, v);
      }
    }
    if (number(m, "cas_badval", v)) {
      w.add("memcached_slab_commands_total", C, kCommandsHelp, {{"slab", slab}, {"command", "cas"}, {"status", "badval"}},
            v);
    }
    // The exporter's "set" is cmd_set less the cas commands (which count in cmd_set).
    double set = 0, cas_hits = 0, cas_badval = 0;
    if (number(m, "cmd_set", set) && number(m, "cas_hits", cas_hits) && number(m, "cas_badval", cas_badval)) {
      w.add("memcached_slab_commands_total", C, kCommandsHelp, {{"slab", slab}, {"command", "set"}, {"status", "hit"}},
            set - cas_hits - cas_badval);
    }
    add_class_figures(w, m, slab, std::begin(kSlabFigures), std::end(kSlabFigures));
  }
}

}  // namespace ithaca::metrics
