// hash_table: the store's chains of items, their bucket locks, and the table's growth.
//
// Locks: a fixed array of one-byte bucket locks, one per bucket of the table the store
// started with (hash_power); lock_of(h) = locks_[h & lock_mask_]. The table of chain heads
// starts that size and doubles when the store holds more than 1.5 items per bucket
// (memcached's rule), so a lock guards 1, 2, 4 ... buckets: those whose index has the
// lock's low bits. Doubling splits old bucket i into new buckets i and i + old size, both
// under the same lock, so moving one old bucket takes one lock and a request still takes
// exactly one.
//
// Growth (memcached's assoc expansion, on our locks): start_growth publishes a descriptor
// naming the new table (zeroed pages) and the old one, with a cursor of old buckets moved.
// Under the lock of hash h, head_of(h) gives the old chain while h's old bucket is not
// moved yet, else the new one; migrate() moves old buckets in order, each under its lock,
// advancing the cursor under that lock; the last one publishes a descriptor without the
// old table, whose pages go back to the kernel (MADV_DONTNEED: its address stays readable,
// as zeros, for the lock-free hints below). Every descriptor lives until ~hash_table, and
// each has its own cursor, so a holder of a lock that read an older descriptor still finds
// its chain (see hash_table.cc for why). No request waits for a whole growth: the mover
// holds one lock at a time, for one chain.
//
// Threads: lock_of / head_of / chain_at from any thread (head_of and chain_at under the
// lock); the growth calls from one caller at a time (the store's grow_step: the cron).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "bucket_lock.h"
#include "item.h"

namespace ithaca::store {

class hash_table {
 public:
  // A table of `buckets` (a power of two) chains and as many locks. Throws bad_alloc.
  // huge_pages: every mapping asks for transparent huge pages (MADV_HUGEPAGE, -L).
  explicit hash_table(uint64_t buckets, bool huge_pages = false);
  ~hash_table();  // unmaps the arrays; the items must be gone (drain)
  hash_table(const hash_table&) = delete;
  hash_table& operator=(const hash_table&) = delete;

  bucket_lock& lock_of(uint64_t h) noexcept { return locks_[h & lock_mask_]; }

  // Under lock_of(h): the link that heads the chain of hash h.
  item** head_of(uint64_t h) noexcept {
    const table* t = current_.load(std::memory_order_acquire);
    if (t->old_heads) [[unlikely]] {
      const uint64_t ob = h & t->old_mask;
      if (ob >= t->moved.load(std::memory_order_relaxed)) return &t->old_heads[ob];
    }
    return &t->heads[h & t->mask];
  }

  // For walkers of bucket b of the current table (b < bucket_count()), under lock_of(b):
  // its chain, and `shared` when that is an old chain not moved yet, which holds the
  // items of b's sibling too (a walker that must see each item once skips those whose
  // hash & mask is not b).
  struct chain {
    item** head;
    uint64_t mask;
    bool shared;
  };
  chain chain_at(uint64_t b) noexcept {
    const table* t = current_.load(std::memory_order_acquire);
    if (t->old_heads) {
      const uint64_t ob = b & t->old_mask;
      if (ob >= t->moved.load(std::memory_order_relaxed)) return {&t->old_heads[ob], t->mask, true};
    }
    return {&t->heads[b & t->mask], t->mask, false};
  }

  // Lock-free hints (no lock): whether bucket b may hold an item (a walker passes an
  // empty one without its lock), and the chain's first item for a prefetch (never
  // followed further). maybe_nonempty is never wrong about items the bucket holds from
  // before the call to after it, across a growth's moves too (a walker that must see
  // every item relies on that); a store racing with the call may or may not be seen.
  bool maybe_nonempty(uint64_t b) const noexcept;
  const item* peek_head(uint64_t h) const noexcept;
  // Brings in the lock and head slot of hash h.
  void prefetch(uint64_t h) const noexcept;

  // The table's size now (the new one while growing). [any thread]
  uint64_t bucket_count() const noexcept { return current_.load(std::memory_order_acquire)->mask + 1; }
  bool growing() const noexcept { return current_.load(std::memory_order_acquire)->old_heads != nullptr; }
  // Bytes of the head arrays mapped now (both while growing) and of the locks: memcached's
  // hash_bytes. Inline: the store adds it to every memory charge (store::mem_used).
  uint64_t bytes() const noexcept {
    return mapped_bytes_.load(std::memory_order_relaxed) + (lock_mask_ + 1) * sizeof(bucket_lock);
  }

  // Growth. [one caller at a time] start_growth: false if already growing, at 2^32
  // buckets, or the new array could not be mapped. migrate: moves up to `count` old
  // buckets, `hash(const item*)` giving each item's hash; true once the growth is done.
  static constexpr unsigned kMaxPower = 32;
  bool start_growth() noexcept;
  template <class Hash>
  bool migrate(uint64_t count, Hash&& hash);

  // Calls f(item*) for every item once, each item's next taken before (f may free it).
  // [no other thread may use the table any more: ~store]
  template <class F>
  void drain(F&& f) noexcept;

 private:
  struct table {
    item** heads = nullptr;
    uint64_t mask = 0;
    item** old_heads = nullptr;  // while growing: the table being moved from
    uint64_t old_mask = 0;
    mutable std::atomic<uint64_t> moved{0};  // old buckets moved [written under each one's lock]
  };
  struct mapping {
    void* base;
    uint64_t bytes;
  };

  // Zeroed anonymous pages (nullptr if none): chain heads and the locks.
  void* map_zeroed(uint64_t bytes) const noexcept;
  void finish_growth(const table* t) noexcept;

  std::atomic<const table*> current_;
  std::vector<std::unique_ptr<table>> tables_;  // every descriptor published [the grower]
  std::vector<mapping> mappings_;               // every head array, to unmap at the end
  uint64_t lock_mask_;
  bool huge_pages_;                        // madvise(MADV_HUGEPAGE) each mapping [immutable]
  bucket_lock* locks_;                     // lock_mask_ + 1 of them, mapped zeroed (unlocked), never moved
  std::atomic<uint64_t> mapped_bytes_{0};  // head arrays holding pages now
};

template <class Hash>
bool hash_table::migrate(uint64_t count, Hash&& hash) {
  const table* t = current_.load(std::memory_order_relaxed);  // the grower's own store
  if (!t->old_heads) return true;
  const uint64_t old_n = t->old_mask + 1;
  uint64_t i = t->moved.load(std::memory_order_relaxed);
  for (uint64_t k = 0; k < count && i < old_n; ++k, ++i) {
    // Even an empty bucket is passed under its lock: a store holding it may be linking
    // an item into the old chain right now (it saw the bucket not moved yet).
    bucket_guard guard(lock_of(i));
    // The new chains are whole before the old head reads empty (a release store):
    // maybe_nonempty, without the lock, reads the old head and then the new ones, so at
    // no moment do both read empty while the items are in neither (a scan that passed
    // the bucket then would miss items no store will report: replication's initial sync).
    // Nobody follows the old chain meanwhile: walkers hold this lock, the hints never
    // follow a link.
    item* it = t->old_heads[i];
    while (it) {
      item* next = it->next_;
      item** head = &t->heads[hash(it) & t->mask];
      it->next_ = *head;
      std::atomic_ref<item*>(*head).store(it, std::memory_order_relaxed);
      it = next;
    }
    std::atomic_ref<item*>(t->old_heads[i]).store(nullptr, std::memory_order_release);
    t->moved.store(i + 1, std::memory_order_relaxed);  // under the lock: see head_of
  }
  if (i < old_n) return false;
  finish_growth(t);
  return true;
}

template <class F>
void hash_table::drain(F&& f) noexcept {
  const table* t = current_.load(std::memory_order_acquire);
  auto walk = [&](item** heads, uint64_t from, uint64_t n) {
    for (uint64_t b = from; b < n; ++b) {
      for (item* it = heads[b]; it;) {
        item* next = it->next_;
        f(it);
        it = next;
      }
      heads[b] = nullptr;
    }
  };
  walk(t->heads, 0, t->mask + 1);
  if (t->old_heads) walk(t->old_heads, t->moved.load(std::memory_order_relaxed), t->old_mask + 1);
}

}  // namespace ithaca::store
