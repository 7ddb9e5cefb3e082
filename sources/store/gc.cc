// The GC sweep, inline eviction and scan: the code that walks buckets.
//
// CLOCK (eviction_policy::clock): every GC visit and every inline-eviction sample adds 1 to
// an item's counter (saturating at 255); every access resets it to 0. The eviction score is
// counter * 2 + (never fetched ? 1 : 0), so among items equally old the never-read ones go
// first; the highest scores are the coldest items. With s3fifo, memory is freed by
// s3fifo.cc; the sampled eviction and the sweep's disk watermarks here serve only the large
// values' disk budget, by the same CLOCK kept in clock_'s upper six bits (item.h; to 63),
// so the large values keep clock's order: least recently read first.
#include <algorithm>

#include "large_arena.h"
#include "store.h"
#include "store_inline.h"

namespace ithaca::store {

namespace {

constexpr size_t kSampleBuckets = 64;       // inline eviction: non-empty buckets per sample
constexpr uint64_t kMaxVisits = 4096;       // ... buckets visited (mostly empty) per sample
constexpr int kSampleRounds = 4;            // ... and samples per store, bounding the work
constexpr uint64_t kGcSampleRuns = 16;      // the sweep's threshold sample: runs over the table
constexpr size_t kGcSampleRunItems = 64;    // ... items weighed per run (1,024 in all)
constexpr uint64_t kGcSampleStride = 7919;  // ... moved by a prime between samples

// The counter once a hand has passed, and the score of a counter (higher: colder). s3fifo:
// the CLOCK counter is clock_'s upper six bits (its low two are the reads, left alone).
uint8_t hand_passed(uint8_t counter, bool s3fifo) noexcept {
  if (s3fifo) return (counter >> 2) < 63 ? static_cast<uint8_t>(counter + 4) : counter;
  return counter < 255 ? static_cast<uint8_t>(counter + 1) : 255;
}
unsigned hand_score(uint8_t counter, const item* it, bool s3fifo) noexcept {
  const unsigned age = s3fifo ? counter >> 2 : counter;
  return age * 2 + ((it->bits_ & kFetched) ? 0u : 1u);
}

}  // namespace

// The lowest score s such that the items scoring >= s hold at least `need` bytes.
unsigned store::threshold_for(const histogram& h, uint64_t need) const noexcept {
  uint64_t acc = 0;
  for (unsigned s = kScoreCount; s-- > 0;) {
    acc += h[s];
    if (acc >= need) return s;
  }
  return 0;
}

// Calls f(const item*) for each item of bucket b of the current table, under its lock; on a
// chain not moved yet, the sibling bucket's items are left out. An empty bucket is passed on
// a relaxed load of its head, without its lock.
template <typename F>
void store::for_each_in_bucket(uint64_t b, F&& f) {
  if (!table_.maybe_nonempty(b)) return;
  bucket_guard guard(table_.lock_of(b));
  const hash_table::chain c = table_.chain_at(b);
  for (const item* it = *c.head; it; it = it->next_) {
    if (in_bucket(it, b, c)) f(it);
  }
}

// The sweep's threshold sample. [gc_sweep's caller; bucket locks one at a time] Fills `h`
// with the bytes of the items there are now (disk: the extents of large items; else every
// item's memory) by the score each will have once the sweep visits it (one more visit),
// and returns their total. kGcSampleRuns runs start at points spread evenly over the
// table (moved between samples), each walking until it has weighed kGcSampleRunItems
// items or covered its share of the table; an empty bucket is passed on a relaxed load
// of its head, without its lock. Work: at most one look at every bucket (a table of few
// items, or a disk budget whose large items are few), at most 1,024 items weighed.
uint64_t store::gc_sample(bool disk, uint32_t sec, histogram& h) noexcept {
  h.fill(0);
  const uint64_t n = table_.bucket_count();
  const uint64_t mask = n - 1;
  const uint64_t runs = std::min(kGcSampleRuns, n);
  const uint64_t share = n / runs;
  gc_sample_offset_ = (gc_sample_offset_ + kGcSampleStride) & mask;
  uint64_t total = 0;
  for (uint64_t r = 0; r < runs; ++r) {
    uint64_t b = (gc_sample_offset_ + r * share) & mask;
    size_t weighed = 0;
    for (uint64_t v = 0; v < share && weighed < kGcSampleRunItems; ++v, b = (b + 1) & mask) {
      for_each_in_bucket(b, [&](const item* it) {
        remove_reason why;
        if (invalid(it, sec, why)) return;  // the sweep reclaims it rather than evicting it
        const uint64_t w = !disk ? item_mem(it) : it->is_large() ? large_arena::rounded(it->large()->size()) : 0;
        if (w == 0) return;
        h[hand_score(hand_passed(it->clock_, s3fifo_), it, s3fifo_)] += w;
        total += w;
        ++weighed;
      });
    }
  }
  return total;
}

// The sweep's watermarks now, of the memory limit and of the arena's disk budget (no
// arena: both 0, never evicting).
store::gc_marks store::gc_marks_now() const noexcept {
  gc_marks m;
  const uint64_t limit = memory_limit();
  m.high = limit / 100 * cfg_.gc_high_watermark_pct;
  m.low = limit / 100 * cfg_.gc_low_watermark_pct;
  const uint64_t disk_limit = arena_ ? arena_->limit() : 0;
  m.disk_high = disk_limit / 100 * cfg_.gc_high_watermark_pct;
  m.disk_low = disk_limit / 100 * cfg_.gc_low_watermark_pct;
  return m;
}

// Above the high watermark, choose the threshold from a sample of the items there are
// now: evicting everything at or above it frees the share of the budget that brings
// usage under the low watermark, coldest first. (An older pass's histogram does not
// do: stores evicting inline age what their sampling hand passes, so after a burst
// its scores say nothing of the items stored since.) [gc_sweep's caller; the sample
// takes bucket locks one at a time]
void store::gc_start_evicting(gc_budget& g, bool disk, uint64_t used, uint64_t hi, uint64_t lo, uint32_t sec) noexcept {
  if (g.evicting || used <= hi) return;
  g.evicting = true;
  histogram h;
  const uint64_t weighed = gc_sample(disk, sec, h);
  if (weighed == 0) {
    g.threshold = kScoreCount;  // nothing of this budget's kind seen: nothing to evict
    return;
  }
  // The sample's share of the excess, and an eighth more: a sample misjudges the
  // share a little either way, and the sweep stops at the low watermark anyway.
  const auto share = static_cast<uint64_t>(static_cast<unsigned __int128>(weighed) * (used - lo) * 9 / (used * 8));
  g.threshold = threshold_for(h, share);
}

// One bucket of the sweep, under its lock: unlinks the invalid items (reclaimed), ages
// the others (CLOCK), evicts those at or above an evicting budget's threshold while that
// budget is above its low watermark, and notes each class's least recent access. Counts
// into `out` and `checked` (items visited per class); what it unlinks is freed after the
// unlock. An empty bucket is passed without taking (and so writing) its lock: an item
// linked just after that look waits for the next sweep.
void store::gc_sweep_bucket(uint64_t b, uint32_t sec, const gc_marks& m, gc_stats& out,
                            std::array<uint64_t, kSlabClassMax>& checked) noexcept {
  if (!table_.maybe_nonempty(b)) return;
  reclaim_list rl(home_);
  bucket_guard guard(table_.lock_of(b));
  uint64_t pending = 0;       // bytes unlinked in this bucket, freed after the unlock
  uint64_t pending_disk = 0;  // ... and their extents, released then (unless read)
  const hash_table::chain c = table_.chain_at(b);
  item** link = c.head;
  while (item* it = *link) {
    if (!in_bucket(it, b, c)) {  // the sibling bucket's, on a chain not moved yet
      link = &it->next_;
      continue;
    }
    ++out.visited;
    if (!it->is_placeholder()) ++checked[it->slab_class_];
    remove_reason why;
    if (invalid(it, sec, why)) {
      if (!it->is_placeholder()) {
        ++out.reclaimed;
        class_count(it, class_counter::reclaimed);
        class_count(it, class_counter::crawler_reclaimed);
        if (why == remove_reason::Expired && !(it->bits_ & kFetched)) {
          ++out.expired_unfetched;
          class_count(it, class_counter::expired_unfetched);
        }
      }
      pending += item_mem(it);
      unlink(link, rl, why);
      continue;
    }
    it->clock_ = hand_passed(it->clock_, s3fifo_);
    const unsigned s = hand_score(it->clock_, it, s3fifo_);
    const uint64_t size = item_mem(it);
    const uint64_t disk = it->is_large() ? large_arena::rounded(it->large()->size()) : 0;
    const bool over_memory = gc_memory_.evicting && s >= gc_memory_.threshold && mem_used() > m.low + pending;
    const bool over_disk = disk && gc_disk_.evicting && s >= gc_disk_.threshold &&
                           (arena_ ? arena_->used() : 0) > m.disk_low + pending_disk;
    if (over_memory || over_disk) {
      if (!it->is_placeholder()) {
        ++out.evictions;
        if (!(it->bits_ & kFetched)) ++out.evicted_unfetched;
        if (disk) ++out.large_evictions;
        count_class_eviction(it, sec, false);
      }
      pending += size;
      pending_disk += disk;
      unlink(link, rl, remove_reason::Evicted);
      continue;
    }
    if (!it->is_placeholder()) {
      uint32_t& oldest = gc_oldest_atime_[it->slab_class_];
      if (oldest == 0 || it->atime_ < oldest) oldest = it->atime_;
    }
    link = &it->next_;
  }
}

// A sweep call's counts into the store's counters, the caller's running totals and the
// per-class crawler_items_checked.
void store::gc_count(const gc_stats& out, const std::array<uint64_t, kSlabClassMax>& checked,
                     gc_stats& total) noexcept {
  stats_.add(store_counter::reclaimed, static_cast<int64_t>(out.reclaimed));
  stats_.add(store_counter::expired_unfetched, static_cast<int64_t>(out.expired_unfetched));
  stats_.add(store_counter::evictions, static_cast<int64_t>(out.evictions));
  stats_.add(store_counter::evicted_unfetched, static_cast<int64_t>(out.evicted_unfetched));
  stats_.add(store_counter::large_value_gc_evictions, static_cast<int64_t>(out.large_evictions));
  total.visited += out.visited;
  total.reclaimed += out.reclaimed;
  total.expired_unfetched += out.expired_unfetched;
  total.evictions += out.evictions;
  total.evicted_unfetched += out.evicted_unfetched;
  total.large_evictions += out.large_evictions;
  for (unsigned cls = 0; cls < kSlabClassMax; ++cls) {
    if (checked[cls]) class_stats_.add(cls, class_counter::crawler_items_checked, static_cast<int64_t>(checked[cls]));
  }
}

// See store.h for the contract. [the cron coroutine on the pooler, the one
// caller; bucket locks one at a time, each for one chain] Work per call:
// `count` buckets (gc_sweep_bucket), plus one threshold sample (gc_sample)
// when a budget goes above its high watermark (gc_start_evicting); the
// threshold then holds to the end of the pass, so a sweep never needs a
// second look at a bucket.
uint64_t store::gc_sweep(uint64_t first_bucket, uint64_t count, const store_now& now, gc_stats& total) {
  gc_stats out;  // this call's counts; added to the caller's running totals at the end
  const uint64_t n = table_.bucket_count();
  if (first_bucket >= n) return 0;
  const uint64_t end = std::min(n, first_bucket + count);
  const uint32_t sec = server_sec(now);
  last_sec_.store(sec, std::memory_order_relaxed);
  // Items visited per class, added to class_stats_ once at the end (the sweep is
  // memcached's LRU crawler here: crawler_items_checked).
  std::array<uint64_t, kSlabClassMax> checked{};
  const gc_marks m = gc_marks_now();
  auto disk_used = [&]() -> uint64_t { return arena_ ? arena_->used() : 0; };
  if (evictions()) {
    // s3fifo: no eviction ahead of need (a store's eviction costs one queue entry or a
    // bucket of main's hand, so memory stays full of items); only a lowered limit is
    // brought down below.
    if (!s3fifo_) gc_start_evicting(gc_memory_, false, mem_used(), m.high, m.low, sec);
    gc_start_evicting(gc_disk_, true, disk_used(), m.disk_high, m.disk_low, sec);
  } else {
    // memcached -M (turned off by a reload mid-pass too): the sweep only reclaims.
    gc_memory_.evicting = gc_disk_.evicting = false;
  }
  for (uint64_t b = first_bucket; b < end; ++b) gc_sweep_bucket(b, sec, m, out, checked);
  if (gc_memory_.evicting && mem_used() <= m.low) gc_memory_.evicting = false;
  if (gc_disk_.evicting && disk_used() <= m.disk_low) gc_disk_.evicting = false;
  gc_count(out, checked, total);
  // Over the budget itself (lowered by a SIGHUP, before a full pass gave the watermarks
  // a histogram): sampled eviction at once, as a store would.
  if (arena_ && arena_->used() > arena_->limit() && evictions()) evict_large_inline(0, true);
  if (s3fifo_ && evictions() && mem_used() > memory_limit()) s3fifo_evict(memory_limit(), true, &total.evictions);
  if (end < table_.bucket_count())  // grown meanwhile: the pass goes on to the new end
    return end;
  // A full pass is complete: the next one takes a new sample if it is still above.
  gc_memory_.evicting = false;
  gc_disk_.evicting = false;
  // The least recent access per class, as this pass saw it (memcached's age).
  for (unsigned cls = 0; cls < kSlabClassMax; ++cls) {
    class_stats_.set_oldest_atime(cls, gc_oldest_atime_[cls]);
    gc_oldest_atime_[cls] = 0;
  }
  return 0;
}

// Called by a storing thread holding no lock, after charging its new item. Bounded work
// (Redis's dictRehash rule: a bound on empty buckets too, else a sparse table means an
// unbounded walk): each of kSampleRounds rounds visits up to kMaxVisits buckets from the
// shared cursor until it has kSampleBuckets non-empty ones, one lock at a time, and builds a
// histogram of their scores; then it revisits those buckets and evicts from the coldest score
// down until usage is back under the limit.
// With s3fifo, s3fifo.cc's eviction instead.
bool store::evict_inline(uint64_t target) noexcept {
  return s3fifo_ ? s3fifo_evict(target, false) : evict_sampled(false, 0, false, target);
}

// memcached -M: a store that does not fit may still take the room of expired and flushed
// items (memcached's lru_pull_tail reclaims those with evictions off too), so after a
// flush_all the cache fills again at once rather than after the next GC sweep. The same
// bounded walk as evict_sampled's sample (kSampleRounds rounds of up to kSampleBuckets
// non-empty buckets in kMaxVisits), unlinking only what is no longer valid, judged at the
// last GC sweep's second (a store is given no clock). Counted as reclaimed. [a storing
// thread, no lock held; bucket locks one at a time] True if usage is now at most
// `target`.
bool store::reclaim_inline(uint64_t target) noexcept {
  const uint32_t sec = last_sec_.load(std::memory_order_relaxed);
  const uint64_t n = table_.bucket_count();
  const uint64_t mask = n - 1;
  const uint64_t max_visits = std::min(kMaxVisits, n);
  for (int round = 0; round < kSampleRounds; ++round) {
    if (mem_used() <= target) return true;
    size_t taken = 0;
    for (uint64_t visited = 0; visited < max_visits && taken < kSampleBuckets; ++visited) {
      const uint64_t b = evict_cursor_.fetch_add(1, std::memory_order_relaxed) & mask;
      reclaim_list rl(home_);
      bucket_guard guard(table_.lock_of(b));
      item** link = table_.chain_at(b).head;
      if (*link == nullptr) continue;
      ++taken;
      while (item* it = *link) {
        remove_reason why;
        if (!invalid(it, sec, why)) {
          link = &it->next_;
          continue;
        }
        if (!it->is_placeholder()) count_reclaimed(it, why);
        unlink(link, rl, why);
      }
    }
  }
  return mem_used() <= target;
}

// The same sampling for the large-value disk budget (large_only): only items whose value is
// in the arena are weighed and evicted, by their extent's size, until an extent of `need`
// bytes fits. Evicted extents come back as soon as the reclaim list drops the last
// reference (at once, unless a reader still holds the value).
bool store::evict_large_inline(uint64_t need, bool by_gc) noexcept {
  return arena_ && evict_sampled(true, need, by_gc);
}

// Under the item's bucket lock. `direct`: a store evicted it to make room (memcached's
// direct_reclaims: a worker thread evicting for itself).
void store::count_class_eviction(const item* it, uint32_t sec, bool direct) noexcept {
  class_count(it, class_counter::evicted);
  if (it->deadline_ != kNever) class_count(it, class_counter::evicted_nonzero);
  if (!(it->bits_ & kFetched)) class_count(it, class_counter::evicted_unfetched);
  if (direct) class_count(it, class_counter::direct_reclaims);
  class_stats_.set_evicted_time(it->slab_class_, sec > it->atime_ ? sec - it->atime_ : 0);
}

void store::count_eviction(const item* it, bool by_gc) noexcept {
  if (it->is_placeholder()) return;
  // A store is given no clock: the last GC sweep's second stands in for evicted_time.
  count_class_eviction(it, last_sec_.load(std::memory_order_relaxed), !by_gc);
  stats_.add(store_counter::evictions);
  if (!(it->bits_ & kFetched)) stats_.add(store_counter::evicted_unfetched);
  if (it->is_large())
    stats_.add(by_gc ? store_counter::large_value_gc_evictions : store_counter::large_value_inline_evictions);
  if (evict_observer_) {
    evict_observer_->on_evict(evicted_item{it->key(), it->flags_, it->data_size(), it->deadline_, it->atime_,
                                           (it->bits_ & kFetched) != 0, it->slab_class_});
  }
}

// Evicts by sampled CLOCK scores until usage fits (memory, or with
// large_only the arena for an extent of `need` bytes): up to kSampleRounds
// rounds, each ageing and weighing up to kSampleBuckets non-empty buckets
// (found in at most kMaxVisits buckets, or the whole table for large items,
// which are few) and evicting those at or above the threshold that frees the
// excess. [any thread storing (inline), or the GC sweep for a lowered disk
// budget; bucket locks one at a time, never under another lock] False if it
// still does not fit.
bool store::evict_sampled(bool large_only, uint64_t need, bool by_gc, uint64_t target) noexcept {
  auto done = [&] { return large_only ? arena_->has_room(need) : mem_used() <= target; };
  auto excess = [&]() -> uint64_t {
    if (large_only) {
      const uint64_t want = arena_->used() + large_arena::rounded(need);
      return want > arena_->limit() ? want - arena_->limit() : 0;
    }
    const uint64_t used = mem_used();
    return used > target ? used - target : 0;
  };
  auto weight = [&](const item* it) -> uint64_t {
    if (!large_only) return item_mem(it);
    return it->is_large() ? large_arena::rounded(it->large()->size()) : 0;
  };
  const uint64_t n = table_.bucket_count();
  const uint64_t mask = n - 1;
  // Large values are few (the budget over the threshold: thousands, in a table of a
  // million buckets), so their sample may walk the whole table to find them: a bound
  // of one pass per round, paid only by a store that already writes a large value.
  const uint64_t max_visits = large_only ? n : std::min(kMaxVisits, n);
  auto wanted = [&](const item* head) {
    if (!large_only) return head != nullptr;
    for (const item* it = head; it; it = it->next_) {
      if (it->is_large()) return true;
    }
    return false;
  };
  histogram h;
  std::array<uint64_t, kSampleBuckets> sample;
  for (int round = 0; round < kSampleRounds; ++round) {
    if (done()) return true;
    h.fill(0);
    size_t taken = 0;
    for (uint64_t visited = 0; visited < max_visits && taken < sample.size(); ++visited) {
      const uint64_t b = evict_cursor_.fetch_add(1, std::memory_order_relaxed) & mask;
      bucket_guard guard(table_.lock_of(b));
      item* const head = *table_.chain_at(b).head;  // a chain not moved yet: b's and its sibling's
      if (!wanted(head)) continue;
      sample[taken++] = b;
      // The sample is a CLOCK hand too: it ages what it passes, so between two GC
      // sweeps the items stored since the hand last went by (counter 0) are told
      // apart from older ones and are not the first to go.
      for (item* it = head; it; it = it->next_) {
        it->clock_ = hand_passed(it->clock_, s3fifo_);
        h[hand_score(it->clock_, it, s3fifo_)] += weight(it);
      }
    }
    if (done()) return true;
    const unsigned threshold = threshold_for(h, excess());
    for (size_t i = 0; i < taken && !done(); ++i) {
      const uint64_t b = sample[i];
      reclaim_list rl(home_);
      bucket_guard guard(table_.lock_of(b));
      item** link = table_.chain_at(b).head;  // again: it may have moved since
      while (item* it = *link) {
        if (hand_score(it->clock_, it, s3fifo_) >= threshold && (!large_only || it->is_large())) {
          count_eviction(it, by_gc);
          unlink(link, rl, remove_reason::Evicted);
        } else {
          link = &it->next_;
        }
      }
    }
  }
  return done();
}

template <typename F>
uint64_t store::for_each_live(uint64_t first_bucket, uint64_t count, const store_now& now, F&& f) {
  const uint64_t n = table_.bucket_count();
  if (first_bucket >= n) return 0;
  const uint64_t end = std::min(n, first_bucket + count);
  const uint32_t sec = server_sec(now);
  for (uint64_t b = first_bucket; b < end; ++b) {
    for_each_in_bucket(b, [&](const item* it) {
      remove_reason why;
      if (!it->is_placeholder() && !invalid(it, sec, why) && !hidden_expired(it, sec)) f(it);
    });
  }
  // Grown meanwhile: the walk goes on to the new end. An item of a bucket below `end`
  // may be seen twice across a growth (it moved up to b + old size), never missed.
  return end < table_.bucket_count() ? end : 0;
}

uint64_t store::scan(uint64_t first_bucket, uint64_t count, const store_now& now, const scan_visitor& visitor) {
  return for_each_live(first_bucket, count, now, [&](const item* it) {
    item_view v{it->key(),
                it->flags_,
                it->deadline_,
                it->cas_,
                it->is_large() ? std::string_view{} : it->value(),
                it->is_large() ? it->large() : nullptr};
    visitor(v);
  });
}

uint64_t store::scan_meta(uint64_t first_bucket, uint64_t count, const store_now& now, const meta_visitor& visitor) {
  return for_each_live(first_bucket, count, now, [&](const item* it) {
    item_meta m{it->key(),
                it->deadline_,
                it->atime_,
                client_cas(it->cas_),
                it->flags_,
                it->data_size(),
                (it->bits_ & kFetched) != 0,
                (it->bits_ & kKeyBinary) != 0,
                it->cas_};
    visitor(m);
  });
}

}  // namespace ithaca::store
