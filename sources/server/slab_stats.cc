#include "slab_stats.h"

#include <string>

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
// (slab_classes::emulated_pages).
void slab_stat_lines(const store::slab_classes& classes, const store::class_stats_snapshot& now,
                     const store::class_stats_snapshot& base, uint64_t total_malloced,
                     stats::stat_lines& out) {
  unsigned active = 0;
  for (unsigned id = 1; id <= classes.largest(); ++id) {
    const class_figures& f = now.cls[id];
    const class_figures& b = base.cls[id];
    if (!f.seen) continue;
    const uint64_t per_page = classes.per_page(id);
    const uint64_t pages = store::slab_classes::emulated_pages(f.used_chunks, per_page);
    const std::string p = std::to_string(id) + ":";
    add(out, p, "chunk_size", classes.chunk_size(id));
    add(out, p, "chunks_per_page", per_page);
    add(out, p, "total_pages", pages);
    add(out, p, "total_chunks", pages * per_page);
    add(out, p, "used_chunks", f.used_chunks);
    add(out, p, "free_chunks", pages * per_page - f.used_chunks);
    add(out, p, "free_chunks_end", 0);  // dead in memcached too: always 0
    add(out, p, "get_hits", since(f.get_hits, b.get_hits));
    add(out, p, "cmd_set", since(f.cmd_set, b.cmd_set));
    add(out, p, "delete_hits", since(f.delete_hits, b.delete_hits));
    add(out, p, "incr_hits", since(f.incr_hits, b.incr_hits));
    add(out, p, "decr_hits", since(f.decr_hits, b.decr_hits));
    add(out, p, "cas_hits", since(f.cas_hits, b.cas_hits));
    add(out, p, "cas_badval", since(f.cas_badval, b.cas_badval));
    add(out, p, "touch_hits", since(f.touch_hits, b.touch_hits));
    ++active;
  }
  out.emplace_back("active_slabs", std::to_string(active));
  out.emplace_back("total_malloced", std::to_string(total_malloced));
}

// ithaca has one CLOCK per store, no HOT/WARM/COLD segments: every item is in "cold" (as
// in memcached without its segmented LRU), every hit a hit to cold, and the figures of
// segments, moves between them, tail repairs and reference-locked tails are 0.
void item_stat_lines(const store::class_stats_snapshot& now, const store::class_stats_snapshot& base,
                     uint32_t now_sec, stats::stat_lines& out) {
  for (unsigned id = 0; id < store::kSlabClassMax; ++id) {
    const class_figures& f = now.cls[id];
    const class_figures& b = base.cls[id];
    if (f.number == 0) continue;
    const std::string p = "items:" + std::to_string(id) + ":";
    const uint64_t age = f.oldest_atime != 0 && now_sec > f.oldest_atime ? now_sec - f.oldest_atime : 0;
    const uint64_t evicted = since(f.evicted, b.evicted);
    const uint64_t reclaimed = since(f.reclaimed, b.reclaimed);
    add(out, p, "number", f.number);
    add(out, p, "number_hot", 0);
    add(out, p, "number_warm", 0);
    add(out, p, "number_cold", f.number);
    add(out, p, "age_hot", 0);
    add(out, p, "age_warm", 0);
    add(out, p, "age", age);
    add(out, p, "mem_requested", f.mem_requested);
    add(out, p, "evicted", evicted);
    add(out, p, "evicted_nonzero", since(f.evicted_nonzero, b.evicted_nonzero));
    add(out, p, "evicted_time", evicted ? f.evicted_time : 0);  // none since a reset: 0
    add(out, p, "outofmemory", since(f.outofmemory, b.outofmemory));
    add(out, p, "tailrepairs", 0);
    add(out, p, "reclaimed", reclaimed);
    add(out, p, "expired_unfetched", since(f.expired_unfetched, b.expired_unfetched));
    add(out, p, "evicted_unfetched", since(f.evicted_unfetched, b.evicted_unfetched));
    add(out, p, "evicted_active", 0);
    // The GC sweep is memcached's LRU crawler: its share of `reclaimed`.
    add(out, p, "crawler_reclaimed", since(f.crawler_reclaimed, b.crawler_reclaimed));
    add(out, p, "crawler_items_checked", since(f.crawler_items_checked, b.crawler_items_checked));
    add(out, p, "lrutail_reflocked", 0);
    add(out, p, "moves_to_cold", 0);
    add(out, p, "moves_to_warm", 0);
    add(out, p, "moves_within_lru", 0);
    add(out, p, "direct_reclaims", since(f.direct_reclaims, b.direct_reclaims));
    add(out, p, "hits_to_hot", 0);
    add(out, p, "hits_to_warm", 0);
    add(out, p, "hits_to_cold", since(f.get_hits, b.get_hits));
    add(out, p, "hits_to_temp", 0);
  }
}

}  // namespace ithaca::server
