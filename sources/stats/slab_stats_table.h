// `stats slabs`: one row per field of a size class's lines (CLASS:FIELD),
// then the lines after the classes, in memcached 1.6.45's order (slabs.c
// do_slabs_stats), and what the Prometheus page shows of each:
// memcached_exporter's families (pkg/exporter/exporter.go), the per-class
// ones labelled `slab` (the class) before the row's labels. Adding a field is
// one row here. `stats slabs` (server/slab_stats.cc: slab_stat_lines) prints
// the class rows for each class an item has used, then the total rows; the
// page (metrics/page_memcached.cc, page_slabs.cc) shows the rows with a
// family; the functional test (tests/functional/test_counter_tables.py)
// reads this file and checks every row on both.
//
// A row: X(name, type, family, help, page read, labels, when, read), the
// columns of stat_row.h (None / "": not on the page).
//   when, read: expressions in slab_stat_lines over `classes` (the
//   store::slab_classes), `id`, `f` and `b` (the class's
//   store::class_figures now and at `stats reset`), `since(now, base)` (an
//   event counter since the reset), that function's `per_page` and `pages`
//   (the class's chunks in memcached's 1 MiB pages), and, for the totals,
//   `active` (the classes listed) and `total_malloced`.
// [any thread; constant]
#pragma once

#include "stat_row.h"

// memcached_exporter's help of memcached_slab_commands_total.
#define ITHACA_SLAB_COMMANDS_HELP \
  "Total number of all requests broken down by command (get, set, etc.) and status per slab."

// clang-format off
#define ITHACA_SLAB_CLASS_STATS(X) \
  X("chunk_size", Gauge, "memcached_slab_chunk_size_bytes", \
    "Number of bytes allocated to each chunk within this slab class.", Number, "", true, classes.chunk_size(id)) \
  X("chunks_per_page", Gauge, "memcached_slab_chunks_per_page", \
    "Number of chunks within a single page for this slab class.", Number, "", true, per_page) \
  X("total_pages", Gauge, "memcached_slab_current_pages", "Number of pages allocated to this slab class.", Number, \
    "", true, pages) \
  X("total_chunks", Gauge, "memcached_slab_current_chunks", "Number of chunks allocated to this slab class.", Number, \
    "", true, pages * per_page) \
  X("used_chunks", Gauge, "memcached_slab_chunks_used", "Number of chunks allocated to an item.", Number, "", \
    true, f.used_chunks) \
  X("free_chunks", Gauge, "memcached_slab_chunks_free", "Number of chunks not yet allocated items.", Number, "", \
    true, pages * per_page - f.used_chunks) \
  /* dead in memcached too: always 0 */ \
  X("free_chunks_end", Gauge, "memcached_slab_chunks_free_end", \
    "Number of free chunks at the end of the last allocated page.", Number, "", true, 0) \
  X("get_hits", Counter, "memcached_slab_commands_total", ITHACA_SLAB_COMMANDS_HELP, Number, \
    "command=get,status=hit", true, since(f.get_hits, b.get_hits)) \
  /* cmd_set counts cas commands too; the exporter's "set" subtracts them. */ \
  X("cmd_set", Counter, "memcached_slab_commands_total", ITHACA_SLAB_COMMANDS_HELP, ClassSetsLessCas, \
    "command=set,status=hit", true, since(f.cmd_set, b.cmd_set)) \
  X("delete_hits", Counter, "memcached_slab_commands_total", ITHACA_SLAB_COMMANDS_HELP, Number, \
    "command=delete,status=hit", true, since(f.delete_hits, b.delete_hits)) \
  X("incr_hits", Counter, "memcached_slab_commands_total", ITHACA_SLAB_COMMANDS_HELP, Number, \
    "command=incr,status=hit", true, since(f.incr_hits, b.incr_hits)) \
  X("decr_hits", Counter, "memcached_slab_commands_total", ITHACA_SLAB_COMMANDS_HELP, Number, \
    "command=decr,status=hit", true, since(f.decr_hits, b.decr_hits)) \
  X("cas_hits", Counter, "memcached_slab_commands_total", ITHACA_SLAB_COMMANDS_HELP, Number, \
    "command=cas,status=hit", true, since(f.cas_hits, b.cas_hits)) \
  X("cas_badval", Counter, "memcached_slab_commands_total", ITHACA_SLAB_COMMANDS_HELP, Number, \
    "command=cas,status=badval", true, since(f.cas_badval, b.cas_badval)) \
  X("touch_hits", Counter, "memcached_slab_commands_total", ITHACA_SLAB_COMMANDS_HELP, Number, \
    "command=touch,status=hit", true, since(f.touch_hits, b.touch_hits))

#define ITHACA_SLAB_TOTAL_STATS(X) \
  X("active_slabs", None, "", "", Number, "", true, active) \
  X("total_malloced", Gauge, "memcached_malloced_bytes", "Number of bytes of memory allocated to slab pages.", \
    Number, "", true, total_malloced)
// clang-format on

namespace ithaca::stats {

inline constexpr stat_row kSlabClassStats[] = {ITHACA_SLAB_CLASS_STATS(ITHACA_STAT_ROW)};
inline constexpr stat_row kSlabTotalStats[] = {ITHACA_SLAB_TOTAL_STATS(ITHACA_STAT_ROW)};

}  // namespace ithaca::stats
