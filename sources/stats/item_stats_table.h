// `stats items`, one row per field of a size class's lines (items:CLASS:FIELD)
// in memcached 1.6.45's order (items.c item_stats, its LRU maintainer on, as
// memcached runs by default), and what the Prometheus page shows of each:
// memcached_exporter's per-class families (pkg/exporter/exporter.go, its
// help texts and typos included, so a dashboard that shows the help shows the
// same), labelled `slab` (the class) before the row's labels. Adding a field
// is one row here. `stats items` (server/slab_stats.cc: item_stat_lines)
// prints every row for each class holding items; the page
// (metrics/page_slabs.cc) shows the rows with a family; the functional test
// (tests/functional/test_counter_tables.py) reads this file and checks every
// row on both.
//
// A row: X(name, type, family, help, page read, labels, when, read), the
// columns of stat_row.h (None / "": not on the page).
//   when, read: expressions in item_stat_lines over `f` and `b` (the
//   class's store::class_figures now and at `stats reset`), `since(now,
//   base)` (an event counter since the reset), and that function's `age`,
//   `evicted` and `reclaimed`.
// ithaca has one CLOCK per store, no HOT/WARM/COLD segments: every item is in
// "cold" (as in memcached without its segmented LRU), every hit a hit to
// cold, and the figures of segments, moves between them, tail repairs and
// reference-locked tails are 0.
// [any thread; constant]
#pragma once

#include "stat_row.h"

// memcached_exporter's help of memcached_slab_lru_hits_total.
#define ITHACA_LRU_HITS_HELP "Number of get_hits to the LRU."

// clang-format off
#define ITHACA_ITEM_STATS(X) \
  X("number", Gauge, "memcached_slab_current_items", "Number of items currently stored in this slab class.", \
    Number, "", true, f.number) \
  X("number_hot", Gauge, "memcached_slab_hot_items", "Number of items presently stored in the HOT LRU.", Number, "", \
    true, 0) \
  X("number_warm", Gauge, "memcached_slab_warm_items", "Number of items presently stored in the WARM LRU.", Number, \
    "", true, 0) \
  X("number_cold", Gauge, "memcached_slab_cold_items", "Number of items presently stored in the COLD LRU.", Number, \
    "", true, f.number) \
  X("age_hot", Gauge, "memcached_slab_hot_age_seconds", "Age of the oldest item in HOT LRU.", Number, "", true, 0) \
  X("age_warm", Gauge, "memcached_slab_warm_age_seconds", "Age of the oldest item in HOT LRU.", Number, "", true, 0) \
  X("age", Gauge, "memcached_slab_items_age_seconds", "Number of seconds the oldest item has been in the slab class.", \
    Number, "", true, age) \
  /* A counter, as the exporter maps it from `stats items` (INTERNALS.md, "The page"). */ \
  X("mem_requested", Counter, "memcached_slab_mem_requested_bytes", \
    "Number of bytes of memory actual items take up within a slab.", Number, "", true, f.mem_requested) \
  X("evicted", Counter, "memcached_slab_items_evicted_total", \
    "Total number of times an item had to be evicted from the LRU before it expired.", Number, "", true, evicted) \
  X("evicted_nonzero", Counter, "memcached_slab_items_evicted_nonzero_total", \
    "Total number of times an item which had an explicit expire time set had to be evicted from the LRU before it " \
    "expired.", Number, "", true, since(f.evicted_nonzero, b.evicted_nonzero)) \
  /* none since a reset: 0 */ \
  X("evicted_time", Counter, "memcached_slab_items_evicted_time_seconds", \
    "Seconds since the last access for the most recent item evicted from this class.", Number, "", \
    true, evicted ? f.evicted_time : 0) \
  X("outofmemory", Counter, "memcached_slab_items_outofmemory_total", \
    "Total number of items for this slab class that have triggered an out of memory error.", Number, "", \
    true, since(f.outofmemory, b.outofmemory)) \
  X("tailrepairs", Counter, "memcached_slab_items_tailrepairs_total", \
    "Total number of times the entries for a particular ID need repairing.", Number, "", true, 0) \
  X("reclaimed", Counter, "memcached_slab_items_reclaimed_total", "Total number of items reclaimed.", Number, "", \
    true, reclaimed) \
  X("expired_unfetched", Counter, "memcached_slab_items_expired_unfetched_total", \
    "Total number of valid items evicted from the LRU which were never touched after being set.", Number, "", \
    true, since(f.expired_unfetched, b.expired_unfetched)) \
  X("evicted_unfetched", Counter, "memcached_slab_items_evicted_unfetched_total", \
    "Total nmber of items evicted and never fetched.", Number, "", \
    true, since(f.evicted_unfetched, b.evicted_unfetched)) \
  X("evicted_active", None, "", "", Number, "", true, 0) \
  /* The GC sweep is memcached's LRU crawler: its share of `reclaimed`. */ \
  X("crawler_reclaimed", Counter, "memcached_slab_items_crawler_reclaimed_total", \
    "Number of items freed by the LRU Crawler.", Number, "", true, since(f.crawler_reclaimed, b.crawler_reclaimed)) \
  X("crawler_items_checked", None, "", "", Number, "", true, since(f.crawler_items_checked, b.crawler_items_checked)) \
  X("lrutail_reflocked", None, "", "", Number, "", true, 0) \
  X("moves_to_cold", Counter, "memcached_slab_items_moves_to_cold", "Number of items moved from HOT or WARM into COLD.", \
    Number, "", true, 0) \
  X("moves_to_warm", Counter, "memcached_slab_items_moves_to_warm", "Number of items moves from COLD into WARM.", \
    Number, "", true, 0) \
  X("moves_within_lru", Counter, "memcached_slab_items_moves_within_lru", \
    "Number of times active items were bumped within HOT or WARM.", Number, "", true, 0) \
  X("direct_reclaims", None, "", "", Number, "", true, since(f.direct_reclaims, b.direct_reclaims)) \
  X("hits_to_hot", Counter, "memcached_slab_lru_hits_total", ITHACA_LRU_HITS_HELP, Number, "lru=hot", true, 0) \
  X("hits_to_warm", Counter, "memcached_slab_lru_hits_total", ITHACA_LRU_HITS_HELP, Number, "lru=warm", true, 0) \
  X("hits_to_cold", Counter, "memcached_slab_lru_hits_total", ITHACA_LRU_HITS_HELP, Number, "lru=cold", \
    true, since(f.get_hits, b.get_hits)) \
  X("hits_to_temp", Counter, "memcached_slab_lru_hits_total", ITHACA_LRU_HITS_HELP, Number, "lru=temporary", \
    true, 0)
// clang-format on

namespace ithaca::stats {

inline constexpr stat_row kItemStats[] = {ITHACA_ITEM_STATS(ITHACA_STAT_ROW)};

}  // namespace ithaca::stats
