#include "hash_table.h"

#include <sys/mman.h>

#include <new>
#include <type_traits>

namespace ithaca::store {

// Why a lock holder that read an older descriptor still finds its chain. A request takes
// lock_of(h), then reads the descriptor (head_of). The grower moves old bucket i under
// lock_of(i), and stores its descriptor's cursor under it too. So while a request holds
// its lock, the grower can neither move the request's bucket nor finish a growth that
// still has to (it would wait for the lock): what the request read stays true until it
// unlocks. And a request that locks after its bucket was moved sees that (the lock hands
// over what the grower wrote before unlocking). A descriptor read just before a growth
// ends still gives the new chain (its cursor is at the end, and stays there: the next
// growth has a cursor of its own).

hash_table::hash_table(uint64_t buckets, bool huge_pages) : lock_mask_(buckets - 1), huge_pages_(huge_pages) {
  static_assert(std::is_trivially_destructible_v<bucket_lock> && sizeof(bucket_lock) == 1);
  // Zero pages for both: a router's untouched table costs no memory; a zero lock is free.
  auto* heads = static_cast<item**>(map_zeroed(buckets * sizeof(item*)));
  locks_ = static_cast<bucket_lock*>(map_zeroed(buckets * sizeof(bucket_lock)));
  if (!heads || !locks_) {
    if (heads) munmap(heads, buckets * sizeof(item*));
    if (locks_) munmap(locks_, buckets * sizeof(bucket_lock));
    throw std::bad_alloc();
  }
  // Reserved now, so a growth never reallocates them (and never throws there).
  mappings_.reserve(kMaxPower + 2);
  tables_.reserve(2 * kMaxPower + 1);
  mappings_.push_back({locks_, buckets * sizeof(bucket_lock)});
  mappings_.push_back({heads, buckets * sizeof(item*)});
  mapped_bytes_.store(buckets * sizeof(item*), std::memory_order_relaxed);
  auto t = std::make_unique<table>();
  t->heads = heads;
  t->mask = buckets - 1;
  current_.store(t.get(), std::memory_order_release);
  tables_.push_back(std::move(t));
}

hash_table::~hash_table() {
  for (const mapping& m : mappings_) munmap(m.base, m.bytes);
}

// Anonymous pages: zero until written, and (chain heads) given back with MADV_DONTNEED after
// a growth while the address stays valid (the lock-free hints may still read it).
// With huge pages (-L) a table's pages come 2 MiB at a time where the kernel has them (a
// refusal, THP off or not built in, leaves the small pages: the advice is only advice).
void* hash_table::map_zeroed(uint64_t bytes) const noexcept {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  if (huge_pages_) (void)madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

// The old head first (acquire), then the new one: migrate() fills the new chains before
// it empties the old head (release), so an old head read empty because it was moved
// shows the new chains filled. A descriptor that changed meanwhile (a growth started:
// the heads read may be the old table's, moved since; or finished: the old array given
// back to the kernel reads zero) answers "maybe": the caller looks under the lock.
bool hash_table::maybe_nonempty(uint64_t b) const noexcept {
  const table* t = current_.load(std::memory_order_acquire);
  if (t->old_heads && std::atomic_ref<item*>(t->old_heads[b & t->old_mask]).load(std::memory_order_acquire))
    return true;
  if (std::atomic_ref<item*>(t->heads[b & t->mask]).load(std::memory_order_relaxed)) return true;
  return current_.load(std::memory_order_acquire) != t;
}

const item* hash_table::peek_head(uint64_t h) const noexcept {
  const table* t = current_.load(std::memory_order_acquire);
  item** heads = t->old_heads ? t->old_heads : t->heads;  // growing: most chains still there
  const uint64_t mask = t->old_heads ? t->old_mask : t->mask;
  return std::atomic_ref<item*>(heads[h & mask]).load(std::memory_order_relaxed);
}

void hash_table::prefetch(uint64_t h) const noexcept {
  const table* t = current_.load(std::memory_order_acquire);
  __builtin_prefetch(&t->heads[h & t->mask]);
  __builtin_prefetch(&locks_[h & lock_mask_]);
}

bool hash_table::start_growth() noexcept {
  const table* t = current_.load(std::memory_order_relaxed);
  if (t->old_heads || t->mask + 1 >= (uint64_t{1} << kMaxPower)) return false;
  const uint64_t n = (t->mask + 1) * 2;
  auto* heads = static_cast<item**>(map_zeroed(n * sizeof(item*)));
  if (!heads) return false;
  std::unique_ptr<table> next;
  try {
    next = std::make_unique<table>();
    mappings_.push_back({heads, n * sizeof(item*)});  // reserved
  } catch (const std::bad_alloc&) {
    munmap(heads, n * sizeof(item*));
    return false;
  }
  next->heads = heads;
  next->mask = n - 1;
  next->old_heads = t->heads;
  next->old_mask = t->mask;
  mapped_bytes_.fetch_add(n * sizeof(item*), std::memory_order_relaxed);
  current_.store(next.get(), std::memory_order_release);
  tables_.push_back(std::move(next));
  return true;
}

// Every old bucket is moved: a descriptor without the old table, whose pages go back.
void hash_table::finish_growth(const table* t) noexcept {
  std::unique_ptr<table> done;
  try {
    done = std::make_unique<table>();
  } catch (const std::bad_alloc&) {
    return;  // the growing descriptor stays: every bucket reads as moved, so it is right
  }
  done->heads = t->heads;
  done->mask = t->mask;
  current_.store(done.get(), std::memory_order_release);
  tables_.push_back(std::move(done));
  const uint64_t old_bytes = (t->old_mask + 1) * sizeof(item*);
  madvise(t->old_heads, old_bytes, MADV_DONTNEED);
  mapped_bytes_.fetch_sub(old_bytes, std::memory_order_relaxed);
}

}  // namespace ithaca::store
