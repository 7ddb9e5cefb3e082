#include "slab_stats.h"

#include <string>

#include "item_stats_table.h"
#include "slab_stats_table.h"

namespace ithaca::server {

namespace {

using store::class_figures;

void add(stats::stat_lines& out, const std::string& prefix, const char* field, uint64_t v) {
  out.emplace_back(prefix + field, std::to_string(v));
}

// An event counter since the baseline (a counter never goes back, but be safe).
uint64_t since(uint64_t now, uint64_t base) { return now > base ? now - base : 0; }

}  // namespace

// A class is shown once an item has used a chunk of it, and for good: memcached lists a
// class while it has pages, and keeps a class's pages after its items go (only its slab
// automover, after minutes of free pages, moves one). Its pages here are those its
// chunks in use fill now in memcached's 1 MiB pages, at least one: ithaca frees each
// item, so a class holds no memory of its own to report as pages
// (slab_classes::emulated_pages). The lines are the rows of slab_stats_table.h.
void slab_stat_lines(const store::slab_classes& classes, const store::class_stats_snapshot& now,
                     const store::class_stats_snapshot& base, uint64_t total_malloced, stats::stat_lines& out) {
  unsigned active = 0;
  for (unsigned id = 1; id <= classes.largest(); ++id) {
    const class_figures& f = now.cls[id];
    const class_figures& b = base.cls[id];
    if (!f.seen) continue;
    const uint64_t per_page = classes.per_page(id);
    const uint64_t pages = store::slab_classes::emulated_pages(f.used_chunks, per_page);
    const std::string p = std::to_string(id) + ":";
#define ITHACA_X(name, type, prom, help, page, labels, when, read) \
  if (when) add(out, p, name, read);
    ITHACA_SLAB_CLASS_STATS(ITHACA_X)
    ++active;
  }
  {
    const std::string p;  // the lines after the classes have no class prefix
    ITHACA_SLAB_TOTAL_STATS(ITHACA_X)
  }
#undef ITHACA_X
}

// The rows of item_stats_table.h for each class holding items.
void item_stat_lines(const store::class_stats_snapshot& now, const store::class_stats_snapshot& base, uint32_t now_sec,
                     stats::stat_lines& out) {
  for (unsigned id = 0; id < store::kSlabClassMax; ++id) {
    const class_figures& f = now.cls[id];
    const class_figures& b = base.cls[id];
    if (f.number == 0) continue;
    const std::string p = "items:" + std::to_string(id) + ":";
    const uint64_t age = f.oldest_atime != 0 && now_sec > f.oldest_atime ? now_sec - f.oldest_atime : 0;
    const uint64_t evicted = since(f.evicted, b.evicted);
    const uint64_t reclaimed = since(f.reclaimed, b.reclaimed);
#define ITHACA_X(name, type, prom, help, page, labels, when, read) \
  if (when) add(out, p, name, read);
    ITHACA_ITEM_STATS(ITHACA_X)
#undef ITHACA_X
  }
}

}  // namespace ithaca::server
