// store: construction, the table's growth and prefetch, unlinking, the per-class accounting
// and the memory charge of a new item. The inline lookup helpers are in store_inline.h, the
// read path in store_get.cc, set / remove / touch / flush_all in store_write.cc,
// read-modify-write operations in rmw.cc, the GC, inline eviction and scan in gc.cc.
#include "store.h"

#include <new>
#include <type_traits>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <random>

#include <unistd.h>

#include "store_inline.h"

namespace ithaca::store {

namespace {

// The class table counts an item's CAS as the store keeps it for clients (memcached -C).
slab_class_config classes_of(const store_config& cfg) noexcept {
  slab_class_config c = cfg.slab_classes;
  c.cas = cfg.cas_enabled;
  return c;
}

uint64_t round_up_pow2(uint64_t n) noexcept {
  uint64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// s3fifo's queues, sized once from the memory limit at start-up (a later cache_memlimit
// keeps them): the small queue's ring for a tenth of the memory in items of 128 bytes
// (100-byte values take 168; smaller items fill the ring before their share), the ghost for as
// many hashes as main holds such items, a little fewer (256 bytes each). With clock, a
// token size.
size_t small_capacity(const store_config& cfg) noexcept {
  if (cfg.eviction != eviction_policy::s3fifo) return small_fifo::kShards;
  return static_cast<size_t>(std::max<uint64_t>(cfg.memory_limit / 10 / 128, 1024));
}
size_t ghost_capacity(const store_config& cfg) noexcept {
  if (cfg.eviction != eviction_policy::s3fifo) return ghost_set::kWays;
  return static_cast<size_t>(std::max<uint64_t>(cfg.memory_limit / 256, 1024));
}

// The item region's reservation: address space only (PROT_NONE, no commit charge, no
// pages), so `cache_memlimit` may raise the limit to four times the start's, or 16 GiB.
uint64_t region_reserve(uint64_t limit) noexcept { return std::max<uint64_t>(limit * 4, uint64_t{16} << 30); }

// A memory file's size: the limit, page rounded (what the region commits).
uint64_t region_size(uint64_t limit) noexcept {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return (std::max(limit, page) + page - 1) & ~(page - 1);
}

// alloc_item's bound: rounds of eviction, each asking for twice the bytes of the last;
// 24 rounds from a 32-byte block reach 512 MiB, and a round that frees nothing ends it.
constexpr unsigned kRegionEvictRounds = 24;

}  // namespace

store::store(const store_config& cfg) : store(cfg, nullptr) {
  // Last, so errno still says why when the file could not be made (instance.cc logs it).
  arena_ = large_arena::open(cfg.temp_dir, cfg.large_value_disk_limit);
}

store::store(const store_config& cfg, std::shared_ptr<large_arena> arena)
    : cfg_(cfg),
      mf_(cfg.memory_file.empty() ? memory_file_state{}
                                  : memory_file_prepare(cfg.memory_file, region_size(cfg.memory_limit),
                                                        cfg.item_size_max, cfg.cas_enabled,
                                                        cfg.memory_file_replace_in_use)),
      region_(mf_.fd, cfg.memory_limit, region_reserve(cfg.memory_limit), cfg.memory_limit, cfg.large_pages),
      home_{region_, stats_.bytes},
      memory_limit_(cfg.memory_limit),
      item_size_max_(cfg.item_size_max),
      large_value_threshold_(cfg.large_value_threshold),
      lease_interval_ms_(cfg.lease_interval_ms),
      evictions_(cfg.evictions),
      table_(round_up_pow2(std::max<uint64_t>(cfg.bucket_count, 1)), cfg.large_pages),
      s3fifo_(cfg.eviction == eviction_policy::s3fifo),
      small_(small_capacity(cfg)),
      ghost_(ghost_capacity(cfg)),
      classes_(classes_of(cfg)) {
  cfg_.bucket_count = table_.bucket_count();
  std::random_device rd;
  seed_ = cfg.hash_seed != 0 ? cfg.hash_seed : (uint64_t{rd()} << 32) ^ rd();
  lease_counter_.store((uint64_t{rd()} << 32) ^ rd());
  arena_ = std::move(arena);
  if (arena_) arena_->set_limit(cfg.large_value_disk_limit);
}

bool store::set_memory_limit(uint64_t bytes) noexcept {
  if (!region_.set_budget(bytes)) return false;
  memory_limit_.store(bytes, std::memory_order_relaxed);
  return true;
}

void store::set_large_value_disk_limit(uint64_t bytes) noexcept {
  if (arena_) arena_->set_limit(bytes);
}

uint64_t store::large_value_disk_limit() const noexcept {
  return arena_ ? arena_->limit() : cfg_.large_value_disk_limit;
}

uint64_t store::large_value_disk_used() const noexcept { return arena_ ? arena_->used() : 0; }

// Bounded: a few rounds of sampled eviction, each followed by one more try. Fragmentation
// can make an extent not fit although the budget has room by size; eviction goes on then.
large_value* store::create_large(std::span<const char> value) noexcept {
  constexpr int kTries = 4;
  if (!arena_) return nullptr;
  for (int i = 0; i < kTries; ++i) {
    large_value* lv = large_value::create(*arena_, {value.data(), value.size()});
    if (lv || errno != ENOSPC) return lv;
    // Ask for a little more than the value's size each time, to get past fragments.
    if (!evictions() || (!evict_large_inline(value.size() << i) && i > 0))
      break;  // memcached -M: no room is an error, not an eviction
  }
  return nullptr;
}

store::~store() {
  // No other thread may use the store any more.
  // A memory file saved clean keeps its bytes: only the large values' references go.
  table_.drain([this](item* it) {
    if (!mf_saved_)
      item_free(it, region_);
    else if (it->is_large())
      it->large()->unref();
  });
}

bool store::in_bucket(const item* it, uint64_t b, const hash_table::chain& c) const noexcept {
  return !c.shared || (hash_of(it->key()) & c.mask) == b;
}

bool store::grow_step(uint64_t buckets) noexcept {
  auto start = [this] {
    const uint64_t items = stats_.count(store_counter::curr_items);
    return items > table_.bucket_count() / 2 * 3 && table_.start_growth();
  };
  if (!table_.growing() && !start()) return false;
  if (!table_.migrate(buckets, [this](const item* it) { return hash_of(it->key()); })) return true;
  return start();  // this doubling is done: the next one, if the items still ask for it
}

store::table_shape store::table_now() const noexcept {
  return {static_cast<unsigned>(std::countr_zero(table_.bucket_count())), table_.bytes(), table_.growing()};
}

void store::prefetch(std::span<const std::string_view> keys) const noexcept {
  constexpr size_t kMax = 64;
  uint64_t hashes[kMax];
  const size_t n = std::min(keys.size(), kMax);
  for (size_t i = 0; i < n; i++) {
    hashes[i] = hash_of(keys[i]);
    table_.prefetch(hashes[i]);
  }
  for (size_t i = 0; i < n; i++) {
    // The head as it is now: racing writers may change it (benign, a hint only).
    const item* it = table_.peek_head(hashes[i]);
    if (!it) continue;
    // Header and key, and with them a small value (an item needs not start on a line).
    const char* p = reinterpret_cast<const char*>(it);
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64);
    __builtin_prefetch(p + 128);
  }
}

// memcached's reclaimed and expired_unfetched counts of an invalid item about
// to be unlinked, store-wide and per class. [under its bucket lock]
void store::count_reclaimed(const item* it, remove_reason why) noexcept {
  stats_.add(store_counter::reclaimed);
  class_count(it, class_counter::reclaimed);
  if (why == remove_reason::Expired && !(it->bits_ & kFetched)) {
    stats_.add(store_counter::expired_unfetched);
    class_count(it, class_counter::expired_unfetched);
  }
}

void store::unlink(item** link, reclaim_list& rl, remove_reason why) noexcept {
  item* it = *link;
  *link = it->next_;
  if (it->is_placeholder()) {
    stats_.add(store_counter::lease_placeholders, -1);
  } else {
    stats_.add(store_counter::curr_items, -1);
    class_unlink(it);
    if (observer_) observer_->on_remove(it->key(), why);
  }
  rl.add(it);
}

unsigned store::class_of(const item* it) const noexcept {
  return classes_.item_class(it->key_len_, it->flags_, it->data_size());
}

// The per-class counts an item adds (sign 1) or takes back (-1). An item that fits one
// chunk uses one chunk of its own class, found without a second class search (a set
// links one item and unlinks another; class_for was 0.6% of the pipelined set row).
void store::class_account(const item* it, unsigned cls, uint64_t total, int64_t sign) noexcept {
  class_stats_.add(cls, class_counter::number, sign);
  class_stats_.add(cls, class_counter::mem_requested, sign * static_cast<int64_t>(total));
  if (total <= classes_.chunk_max()) {
    class_stats_.add(cls, class_counter::used_chunks, sign);
    if (sign > 0) class_stats_.mark_seen(cls);
    return;
  }
  slab_classes::chunk_list chunks;
  const size_t n = classes_.chunks(it->key_len_, it->flags_, it->data_size(), chunks);
  for (size_t i = 0; i < n; ++i) {
    class_stats_.add(chunks[i].id, class_counter::used_chunks, sign * int64_t{chunks[i].count});
    if (sign > 0) class_stats_.mark_seen(chunks[i].id);
  }
}

// Not under any lock. The item's flags are set (they choose its class for outofmemory).
bool store::charge(item* it) noexcept {
  const int64_t n = static_cast<int64_t>(item_mem(it));
  const int64_t total = stats_.bytes.fetch_add(n, std::memory_order_relaxed) + n;
  const uint64_t limit = memory_limit();
  if (static_cast<uint64_t>(total) <= limit || (evictions() ? evict_inline(limit) : reclaim_inline(limit))) return true;
  stats_.bytes.fetch_sub(n, std::memory_order_relaxed);
  stats_.add(store_counter::out_of_memory);
  if (!it->is_placeholder()) class_stats_.add(class_of(it), class_counter::outofmemory);
  return false;
}

// Not under any lock. The region's blocks are the memory: a failed allocation means the
// region has no free block of the size and no room to grow within its budget, whatever
// the charge says (freed blocks may lie apart), so eviction goes on until the merged
// neighbours of what it freed make one. Evicting in the policy's order keeps the order
// whatever the sizes (no per-size queue); the doubling bounds the rounds.
item* store::alloc_item(std::string_view key, size_t value_len) noexcept {
  uint64_t need = item_cost(key.size(), value_len);
  for (unsigned round = 0;; ++round) {
    const uint64_t limit = memory_limit();
    if (item* it = item_alloc(region_, key, value_len, limit - std::min(overhead_bytes(), limit / 2))) return it;
    if (round >= kRegionEvictRounds) return nullptr;
    const uint64_t used = mem_used();
    const uint64_t target = used > need ? used - need : 0;
    // Progress is what this round unlinked (other threads' stores may raise the charge
    // meanwhile, and a pinned item is freed only by its last reader).
    const uint64_t gone = stats_.count(store_counter::evictions) + stats_.count(store_counter::reclaimed);
    if (evictions())
      evict_inline(target);
    else
      reclaim_inline(target);
    if (mem_used() >= used &&
        stats_.count(store_counter::evictions) + stats_.count(store_counter::reclaimed) == gone)
      return nullptr;  // nothing could go (all pinned, or -M with nothing expired)
    need *= 2;
  }
}

// Not under any lock.
item* store::alloc_charged(std::string_view key, size_t value_len, uint32_t flags) noexcept {
  item* it = alloc_item(key, value_len);
  if (!it) {
    stats_.add(store_counter::out_of_memory);
    class_stats_.add(classes_.item_class(key.size(), flags, value_len), class_counter::outofmemory);
    return nullptr;
  }
  it->flags_ = flags;
  if (!charge(it)) {
    item_free(it, region_);
    return nullptr;
  }
  return it;
}

}  // namespace ithaca::store
