// s3fifo: the store's S3-FIFO eviction (store.h: eviction_policy; INTERNALS.md, "Eviction").
//
// Queues on this store's bucket locks, no list links in the items: an item's queue is a bit
// (kSmall) and its reads a 2-bit counter (clock_'s low bits, 0..3), both under its bucket lock. The
// small queue's order is a ring of item pointers (small_fifo.h), pushed by a store after it
// unlocked its bucket. Main's order is the hash table's: its CLOCK hand is the bucket cursor
// (evict_cursor_), which passes every bucket in turn; an item moved to main or admitted there
// from the ghost set is where its key hashes, not just behind the hand, so it waits half a
// turn on average before its first pass (a read counter of 1..3 gives it more).
//
// Lock order: a queue shard's lock and a bucket lock are never held together; the ghost set
// takes none. [any thread storing, and the GC sweep; no lock held on entry]
#include <algorithm>

#include "store.h"
#include "store_inline.h"

namespace ithaca::store {

namespace {

// A store's eviction work is bounded: this many steps (a small-queue entry settled, or a
// bucket passed by main's hand), the last half of them evicting without second chances.
constexpr uint64_t kS3fifoMaxSteps = 16384;
// Cold items go first while they hold more than this share of the limit (1/8): dense
// enough that the hand finds one in a few buckets. Below it they are main's items with no
// reads, which its hand evicts in turn (on the 30% one-hit stream, 1/64 gave the same
// miss ratio, with the hand walking ~8 times further per eviction near the floor).
constexpr uint64_t kColdShareDiv = 8;

}  // namespace

bool store::s3fifo_admit(item* it, const item* live, uint64_t h) noexcept {
  if (live) {
    // Stored again while cached: a use, as a read is; it stays out of the small queue.
    it->clock_ = static_cast<uint8_t>(std::min(s3fifo_reads(live) + 1, 3u));
    return false;
  }
  if (ghost_.take(h)) {  // evicted from small lately and wanted again: main
    stats_.add(store_counter::ghost_hits);
    return false;
  }
  it->bits_ |= kSmall;
  return true;
}

void store::small_push(item* it, uint64_t h) noexcept {
  small_fifo::entry full;
  // A full ring hands back its oldest entry: the queue's end, settled as s3fifo_evict
  // would settle it when that would take from the small queue (memory nearly full, the
  // queue at its share, no cold items to go first); else that item goes on to main, unread
  // (kCold, moves_to_cold) unless read, as a cache still filling evicts nothing.
  if (!small_.push({it, h}, full)) return;
  const uint64_t limit = memory_limit();
  const bool evict = evictions() && mem_used() >= limit - limit / 32 &&
                     small_bytes_.load(std::memory_order_relaxed) >= static_cast<int64_t>(limit / 10) &&
                     cold_bytes_.load(std::memory_order_relaxed) <= static_cast<int64_t>(limit / kColdShareDiv);
  small_settle(full, evict, false);
}

bool store::small_settle(const small_fifo::entry& e, bool may_evict, bool by_gc) noexcept {
  const uint32_t sec = last_sec_.load(std::memory_order_relaxed);  // a store is given no clock
  reclaim_list rl(home_);
  bucket_guard guard(table_.lock_of(e.hash));
  item** link = table_.head_of(e.hash);
  while (*link && *link != e.it) link = &(*link)->next_;
  item* it = *link;
  if (!it || !(it->bits_ & kSmall)) return false;  // replaced, deleted or moved since
  remove_reason why;
  if (invalid(it, sec, why)) {  // expired or flushed: its room is reclaimed, not evicted
    count_reclaimed(it, why);
    unlink(link, rl, why);
    return false;
  }
  if (s3fifo_reads(it) > 0 || !may_evict) {
    it->bits_ &= static_cast<uint8_t>(~kSmall);
    small_leave(it);
    if (s3fifo_reads(it) > 0) {
      stats_.add(store_counter::moves_to_warm);
    } else {  // unread: main's to evict first, once memory is full (kCold)
      it->bits_ |= kCold;
      cold_bytes_.fetch_add(static_cast<int64_t>(item_mem(it)), std::memory_order_relaxed);
      stats_.add(store_counter::moves_to_cold);
    }
    return false;
  }
  ghost_.insert(e.hash);
  count_eviction(it, by_gc);
  unlink(link, rl, remove_reason::Evicted);
  return true;
}

uint64_t store::main_hand_step(uint64_t target, bool by_gc, hand_mode mode, uint32_t sec) noexcept {
  const bool force = mode == hand_mode::force;
  const uint64_t b = evict_cursor_.fetch_add(1, std::memory_order_relaxed) & (table_.bucket_count() - 1);
  if (!table_.maybe_nonempty(b)) return 0;
  reclaim_list rl(home_);
  bucket_guard guard(table_.lock_of(b));
  uint64_t pending = 0;  // bytes unlinked here, given back after the unlock
  int64_t kept = 0;      // second chances given
  uint64_t evicted = 0;
  // The whole chain: on one not moved yet by a growth, the sibling bucket's items too.
  item** link = table_.chain_at(b).head;
  while (item* it = *link) {
    remove_reason why;
    if (invalid(it, sec, why)) {
      if (!it->is_placeholder()) count_reclaimed(it, why);
      pending += item_mem(it);
      unlink(link, rl, why);
      continue;
    }
    const bool cold = it->bits_ & kCold;
    if ((!force && (it->bits_ & kSmall)) || (mode == hand_mode::cold_only && !cold)) {
      link = &it->next_;  // the small queue's to settle; or not cold: left as it is
      continue;
    }
    if (!force && s3fifo_reads(it) > 0) {
      --it->clock_;  // the low bits: one read fewer
      ++kept;
      link = &it->next_;
      continue;
    }
    if (mem_used() <= target + pending) {  // enough: the rest wait for the next pass
      link = &it->next_;
      continue;
    }
    if (cold) ghost_.insert(hash_of(it->key()));  // left the small queue unread: as evictS does
    count_eviction(it, by_gc);
    ++evicted;
    pending += item_mem(it);
    unlink(link, rl, remove_reason::Evicted);
  }
  if (kept) stats_.add(store_counter::moves_within_lru, kept);
  return evicted;
}

// S3-FIFO's choice: the small queue's end while the queue holds a tenth of the memory or
// more, else main's hand. First, while the cold items (pushed on unread by a full ring
// while the cache filled: the small queue's overflow) hold more than 1/8 of the memory,
// the hand evicts those only: what S3-FIFO, whose small queue has no bound on its count,
// would have evicted from its end. A hand that has passed a quarter of the budget without
// freeing enough (main all read lately, or nearly all items small while the ring caps the
// queue below its share) settles small entries too; past half it evicts without second
// chances, so a store is never refused for want of a victim.
bool store::s3fifo_evict(uint64_t target, bool by_gc, uint64_t* evicted) noexcept {
  uint64_t n = 0;
  const uint32_t sec = last_sec_.load(std::memory_order_relaxed);
  const uint64_t small_share = memory_limit() / 10;
  const int64_t cold_floor = static_cast<int64_t>(memory_limit() / kColdShareDiv);
  uint64_t hand_steps = 0;
  uint64_t cold_steps = 0;
  for (uint64_t steps = 0; mem_used() > target; ++steps) {
    if (steps >= kS3fifoMaxSteps) break;
    if (cold_steps < kS3fifoMaxSteps / 8 && cold_bytes_.load(std::memory_order_relaxed) > cold_floor) {
      n += main_hand_step(target, by_gc, hand_mode::cold_only, sec);
      ++cold_steps;
      continue;
    }
    const bool small_over = small_bytes_.load(std::memory_order_relaxed) >= static_cast<int64_t>(small_share);
    if (small_over || hand_steps >= kS3fifoMaxSteps / 4) {
      small_fifo::entry e;
      if (small_.pop(e)) {
        n += small_settle(e, true, by_gc) ? 1 : 0;
        continue;
      }
    }
    n += main_hand_step(target, by_gc, hand_steps >= kS3fifoMaxSteps / 2 ? hand_mode::force : hand_mode::normal, sec);
    ++hand_steps;
  }
  if (evicted) *evicted += n;
  return mem_used() <= target;
}

}  // namespace ithaca::store
