// store: the cache's storage engine. One hash shared by every worker thread, bucket locks
// (yrmcds) over a table that doubles as it fills (memcached; hash_table.h). No I/O
// dependencies; time comes from the caller (store_now).
//
// Threads: every public function may be called from any thread concurrently, except
// gc_sweep() and grow_step(), which have one caller at a time between them (the server's
// cron coroutine), and
// set_observer(), which is called before the store is shared.
//
// Limits that change at run time (memory_limit, item_size_max, large_value_threshold,
// lease_interval_ms) are relaxed atomics with setters: the server's reload (pooler) and
// `cache_memlimit` (a worker) write them; every operation reads them once where it needs
// them. The rest of store_config is fixed at construction.
//
// Locks: each operation takes exactly one bucket lock at a time, never two, holds it for a
// memcpy-sized critical section, and never allocates, frees, does I/O or suspends while
// holding it. Allocation happens before the lock; frees (and large-value file closes) after,
// by the unlinker, or by the reader whose pin (item_ref.h) on an unlinked item goes last.
// The only calls made under a bucket lock are lock-free atomics and change_observer hooks.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <cstdlib>
#include <memory>
#include <span>
#include <string_view>

#include "bucket_lock.h"
#include "hash_table.h"
#include "class_stats.h"
#include "ghost_set.h"
#include "large_arena.h"
#include "item.h"
#include "memory_file.h"
#include "reclaim_list.h"
#include "small_fifo.h"
#include "store_stats.h"
#include "store_time.h"
#include "store_types.h"

namespace ithaca::store {

class store {
 public:
  // Allocates the bucket heads and locks (zeroed by calloc: untouched buckets cost no
  // memory) and opens the large values' arena in cfg.temp_dir; if that fails the store
  // works without large values (large_values_available() says, errno says why). Throws
  // std::bad_alloc if the tables cannot be had. [start-up, one thread]
  explicit store(const store_config& cfg = {});
  // The same over an arena opened by the caller (cfg.temp_dir is not used), for a process
  // that makes many stores in turn (the request-path fuzz target: one temp file for the
  // process, not one per input). The store sets its limit to cfg.large_value_disk_limit.
  // One store at a time: the arena must hold no other store's values. A null arena is a
  // store without large values (as if the file could not be made).
  store(const store_config& cfg, std::shared_ptr<large_arena> arena);
  // Frees every item (and drops its large value) before the arena. No item_ref (pin) may
  // outlive the store: its release would charge a freed counter. [no other thread may
  // still use the store: the server joins every machine first]
  ~store();
  store(const store&) = delete;
  store& operator=(const store&) = delete;

  // Looks `key` up and fills `res` (status, flags, CAS, TTL, the value copied into
  // res.value, or with opts.pin the item pinned in res.pinned, or a ref to a large one,
  // to read after the call, never under the lock).
  // `opts` adds gat's touch, mg's vivify (N) and recache (R), lease-get's token or wait,
  // and whether a hit counts as fetched. Lazily unlinks an expired or flushed item.
  // [any thread; one bucket lock, held for a copy: res.value keeps its capacity across
  // calls, so a hit allocates only when the value outgrows it, and then outside the lock]
  void get(std::string_view key, const store_now& now, const get_options& opts, get_result& res);

  // set/add/replace/cas (and ms, lease-set): builds the item (a value over
  // large_value_threshold goes to the arena, written before the lock), evicting inline
  // when over the memory or disk budget, then under the key's bucket lock checks the mode,
  // the CAS and the lease token and links it in place of the old one; the change observer
  // (replication) is told under that lock. append/prepend are read-modify-write
  // (set_rmw): they read, build, and store by CAS, reading again if a writer came between.
  // res: Stored with the new CAS, or why not (store_status). [any thread; one bucket lock
  // at a time; frees after unlocking] Bounds: item_size_max; eviction work as gc.cc's
  // evict_sampled.
  void set(std::string_view key, store_mode mode, std::span<const char> value, uint32_t flags, int64_t exptime,
           const store_now& now, const store_options& opts, store_result& res);

  // incr/decr (ma): read, compute as memcached does (wrap at 2^64, floor at 0, pad a
  // shorter result with spaces), store by CAS; a writer in between makes it read again.
  // ma N creates the item with `initial`. [any thread; one bucket lock at a time]
  void arithmetic(std::string_view key, arith_op op, uint64_t delta, const store_now& now, const arith_options& opts,
                  arith_result& res);

  // delete/md: unlinks the item (and any lease placeholder, which voids its token), or
  // with md I marks it stale under a new CAS instead. Exists on a CAS mismatch. Counts
  // delete_hits/misses; the observer sees the removal under the lock. [any thread; one
  // bucket lock; the item is freed after unlocking]
  remove_status remove(std::string_view key, const store_now& now, const remove_options& opts = {});

  // touch: a new exptime for a live item (not a lease placeholder), which counts as an
  // access (CLOCK reset); replicated as a Touch. [any thread; one bucket lock]
  touch_status touch(std::string_view key, int64_t exptime, const store_now& now);

  // memcached flush_all: items stored at or before now (+delay) become invalid (at
  // now + delay). Removal is lazy (on access or by the GC sweep).
  void flush_all(const store_now& now, int64_t delay = 0);

  // Visits buckets [first_bucket, first_bucket + count) (clamped), one lock at a time:
  // removes expired and flushed items, ages CLOCK counters, and evicts the coldest items
  // while memory is above the high watermark until it is under the low one, and the
  // coldest large items while the arena's disk usage is above the same share of its
  // budget until it is under the low one (so a store rarely has to evict inline).
  // Single caller.
  // Adds this call's counts to `total`. Returns the next bucket to visit (0 after a full
  // pass).
  uint64_t gc_sweep(uint64_t first_bucket, uint64_t count, const store_now& now, gc_stats& total);

  // Calls visitor(item_view) under each bucket lock for each live item in the range.
  // The visitor must only copy/enqueue. Returns the next bucket (0 after the last).
  // [any thread: the replication fan-out's initial sync; one bucket lock at a time,
  // `count` buckets per call, so the caller yields between calls]
  using scan_visitor = std::function<void(const item_view&)>;
  uint64_t scan(uint64_t first_bucket, uint64_t count, const store_now& now, const scan_visitor& visitor);

  // The same walk with each item's metadata (lru_crawler metadump / mgdump).
  // [any thread: a client coroutine; one bucket lock at a time, `count` buckets per call]
  using meta_visitor = std::function<void(const item_meta&)>;
  uint64_t scan_meta(uint64_t first_bucket, uint64_t count, const store_now& now, const meta_visitor& visitor);

  // The hook every change calls under its bucket lock (replication's stream_observer).
  // [before the store is shared: set once at start-up, never changed; a plain pointer]
  void set_observer(change_observer* obs) noexcept { observer_ = obs; }
  // Set before the store is shared (start-up); see eviction_observer.
  void set_eviction_observer(eviction_observer* obs) noexcept { evict_observer_ = obs; }

  // While this node follows a replication master, expiry is the master's to decide, as on
  // a yrmcds slave (which runs no GC): an item past its deadline on this clock is hidden
  // from reads but stays linked until the master's DeleteQ (the master streams its expiry,
  // deletes and evictions), and a stored item whose deadline has already passed here is
  // kept, hidden, rather than dropped. So a Touch or SetQ that arrives after the item's
  // old deadline on this clock (the clocks differ, the stream lags) revives or replaces it
  // instead of finding nothing: the key the master keeps is never lost here. Flushed items
  // and evictions under the memory limit are unchanged. Any thread: the slave session sets
  // it at connect, a promotion clears it before the node takes writes.
  void set_expiry_by_master(bool on) noexcept { expiry_by_master_.store(on, std::memory_order_relaxed); }
  // [any thread; relaxed]
  bool expiry_by_master() const noexcept { return expiry_by_master_.load(std::memory_order_relaxed); }

  // The table's size now (a power of two; it doubles, see grow_step). [any thread]
  uint64_t bucket_count() const noexcept { return table_.bucket_count(); }
  // Doubles the table when the store holds more than 1.5 items per bucket (memcached's
  // rule), moving up to `buckets` old buckets per call (one lock at a time, each for one
  // chain: hash_table.h). True while a growth is under way: call again (after a yield).
  // [the GC sweep's caller: one at a time, between sweep passes]
  bool grow_step(uint64_t buckets) noexcept;
  // memcached's hash_power_level, hash_bytes and hash_is_expanding. [any thread]
  struct table_shape {
    unsigned power;
    uint64_t bytes;
    bool growing;
  };
  table_shape table_now() const noexcept;
  // Bytes charged to the memory limit now (every item's region block, plus a large
  // value's handle). [any thread; relaxed, so a reading while others store is approximate]
  uint64_t mem_used() const noexcept { return static_cast<uint64_t>(stats_.bytes.load(std::memory_order_relaxed)); }

  // Live limits, any thread. Lowering the memory limit evicts nothing at once: the next
  // store's inline eviction and the next GC sweep bring usage under the new limit, and
  // release_free_memory() then gives the emptied pages back. Raising it past the item
  // region's reservation is refused (false; memcached's MEMLIMIT_ADJUST_FAILED).
  uint64_t memory_limit() const noexcept { return memory_limit_.load(std::memory_order_relaxed); }
  bool set_memory_limit(uint64_t bytes) noexcept;
  // Gives the item region's free pages back to the kernel (item_region::trim): after a
  // lowered limit, once usage is under it. Returns the bytes advised. [the cron; rare:
  // it walks every block under the region's lock]
  uint64_t release_free_memory() noexcept { return region_.trim(); }
  // What the memory limit covers besides the items' blocks, so that the process's memory,
  // not only its items', follows -m: the hash table (heads mapped now and locks:
  // memcached's hash_bytes, which memcached leaves outside its -m), s3fifo's queues, and
  // what the server reserved to serve (set_reserved_bytes: the workers' receive rings and
  // the log queue). The item region's top stays under the limit less this (at most half
  // the limit: a large hash_power under a small -m leaves the items room). Not in
  // mem_used(): the items' charge, memcached's total_malloced. [any thread]
  uint64_t overhead_bytes() const noexcept {
    return table_.bytes() + eviction_queue_bytes() + reserved_.load(std::memory_order_relaxed);
  }
  // [start-up, after the workers started; any thread]
  void set_reserved_bytes(uint64_t bytes) noexcept { reserved_.store(bytes, std::memory_order_relaxed); }
  // memcached -e FILE (memory_file.h). restore_memory_file: after construction, before the
  // store is shared: walks the region a graceful stop left (if FILE.meta said so) and links
  // its items again: deadlines, access and store times carried over in unix time (an item
  // past its deadline, or flushed, is dropped), the CAS counter above the highest seen, the
  // flush_all state as it was; every item joins s3fifo's main queue. Lease placeholders
  // and large items are dropped (a large value's file was unlinked with the process that
  // wrote it). [start-up, one thread]
  struct memory_file_result {
    bool used = false;      // a memory file is configured
    uint64_t restored = 0;  // items served again
    uint64_t dropped = 0;   // items expired, flushed, large or placeholders
    std::string why;        // not restored: why (a clean start)
  };
  memory_file_result restore_memory_file(const store_now& now);
  // SIGUSR1's graceful stop: writes FILE.meta `clean 1` with what the next start needs (the
  // blocks' end and checksum, the clocks, the CAS and flush state); the destructor then
  // leaves the region's bytes as they are. False (and `why`) without a memory file or on an
  // I/O error (the file stays `clean 0`: the next start is clean). [after every other thread
  // that used the store stopped]
  bool save_memory_file(const store_now& now, std::string& why);
  // The item region, for stats and tests. [any thread; its figures are relaxed]
  const item_region& region() const noexcept { return region_; }
  // The largest item (header + key + value) a set accepts; the reload sets it before it
  // publishes the parser's new limit. [any thread]
  uint64_t item_size_max() const noexcept { return item_size_max_.load(std::memory_order_relaxed); }
  void set_item_size_max(uint64_t bytes) noexcept { item_size_max_.store(bytes, std::memory_order_relaxed); }
  // Applies to values stored from now on; stored items keep where their value lives.
  void set_large_value_threshold(uint64_t bytes) noexcept {
    large_value_threshold_.store(bytes, std::memory_order_relaxed);
  }
  // memcached -M: whether a store that does not fit may evict others (inline, and the GC
  // sweep above its high watermark); off, it is refused with OutOfMemory. [any thread;
  // the reload sets it]
  bool evictions() const noexcept { return evictions_.load(std::memory_order_relaxed); }
  void set_evictions(bool on) noexcept { evictions_.store(on, std::memory_order_relaxed); }
  // memcached -C off: every CAS a client sees is 0 (get, store, arithmetic results, the
  // dumps), and client CAS values compare as memcached -C compares them, against an item
  // CAS of 0: a cas store (ascii cas, ms C in set mode) is Exists on a live key and
  // NotFound on a missing one; md, ma and binary delete/incr with a non-zero CAS are
  // Exists, with 0 they do not compare; append/prepend ignore the CAS; E is ignored.
  // Items keep a CAS of their own inside: flush_all orders items by it, the lease
  // tokens and the replication stream carry it; so an item costs what it costs with CAS
  // on (its 48-byte header has no field to drop cheaply: the key follows it at a fixed
  // offset), but memcached's class figures count it without its 8 bytes, as memcached
  // -C sizes its items. Fixed for the life of the store. [any thread]
  bool cas_enabled() const noexcept { return cfg_.cas_enabled; }
  // How long a lease token keeps other readers waiting (lease-get, mg N). [any thread]
  void set_lease_interval_ms(uint64_t ms) noexcept { lease_interval_ms_.store(ms, std::memory_order_relaxed); }
  // The large values' disk budget (cache.large_value_disk_limit). A lower one evicts the
  // coldest large values at the next GC sweep or large store.
  void set_large_value_disk_limit(uint64_t bytes) noexcept;
  // The budget in force (cfg's if there is no arena). [any thread]
  uint64_t large_value_disk_limit() const noexcept;
  // Bytes of the arena's extents in use (the temp file's disk usage).
  uint64_t large_value_disk_used() const noexcept;
  // False if the large values' file could not be created (large stores fail).
  // Hints the CPU to bring in what lookups of `keys` will touch: each bucket's chain head
  // and lock, then the chain's first item (header and key). A pipelined batch then waits
  // for memory once, with its misses overlapped, rather than once per request. Takes no
  // lock: a head is read with a relaxed atomic load and only prefetched, never followed
  // further, so a racing unlink or free is harmless (a prefetch never faults). [any thread]
  void prefetch(std::span<const std::string_view> keys) const noexcept;
  bool large_values_available() const noexcept { return arena_ != nullptr; }
  // The counters, each read once (relaxed): not one instant across counters. [any thread;
  // no lock: `stats` and the metrics page call it under their own reset mutex]
  store_stats_snapshot stats() const noexcept {
    store_stats_snapshot s = stats_.snapshot();
    s.small_bytes = static_cast<uint64_t>(std::max<int64_t>(small_bytes_.load(std::memory_order_relaxed), 0));
    return s;
  }
  // The eviction policy (fixed at construction) and what its queues cost besides the
  // items: the small queue's rings and the ghost table (0 with clock). [any thread]
  eviction_policy eviction() const noexcept { return cfg_.eviction; }
  uint64_t eviction_queue_bytes() const noexcept {
    return s3fifo_ ? static_cast<uint64_t>(small_.bytes() + ghost_.bytes()) : 0;
  }
  // Figures per memcached size class (class_stats.h); any thread.
  const slab_classes& classes() const noexcept { return classes_; }
  class_stats_snapshot class_stats_now() const noexcept { return class_stats_.snapshot(); }
  // memcached's `bytes`: its ITEM_ntotal (header, key and NUL, flags, value and CRLF,
  // CAS) summed over the linked items, which is what the classes' mem_requested add up
  // to. Not the memory charge (stats().bytes, what the limit bounds). [any thread]
  uint64_t item_bytes() const noexcept { return class_stats_.total(class_counter::mem_requested); }

 private:
  static constexpr unsigned kScoreCount = 512;  // eviction score: gc.cc's hand_score
  using histogram = std::array<uint64_t, kScoreCount>;

  uint64_t hash_of(std::string_view key) const noexcept;
  // f(const item*) for each item of bucket b, under its lock (gc.cc).
  template <typename F>
  void for_each_in_bucket(uint64_t b, F&& f);
  // scan and scan_meta's walk: f(const item*) for each live item, under its bucket lock.
  template <typename F>
  uint64_t for_each_live(uint64_t first_bucket, uint64_t count, const store_now& now, F&& f);
  // Under table_.lock_of(h): the link to the key's item, or the chain's end.
  item** find_link(uint64_t h, std::string_view key) noexcept;
  // For a walker of bucket b under its lock, on a chain shared while the table grows:
  // whether `it` is b's (hash_table::chain).
  bool in_bucket(const item* it, uint64_t b, const hash_table::chain& c) const noexcept;
  // Under table_.lock_of(h): links `it` first in hash h's chain.
  void link_first(uint64_t h, item* it) noexcept;
  // Why an item linked in a bucket is no longer valid (to be unlinked), if it is not.
  // Under expiry_by_master, an item's own deadline does not make it invalid.
  bool invalid(const item* it, uint32_t sec, remove_reason& why) const noexcept;
  // Under expiry_by_master: a valid item that reads must not see (past its deadline here).
  bool hidden_expired(const item* it, uint32_t sec) const noexcept;
  void unlink(item** link, reclaim_list& rl, remove_reason why) noexcept;
  // Under the bucket lock of `b`: the key's item if it is still valid, else
  // nullptr, after unlinking an expired or flushed one onto `rl`. `link` is
  // set to the key's link in the chain either way. `reclaim`: count such an
  // item as reclaimed (a store takes its place, as memcached counts a store
  // that reuses an expired item's memory).
  item* find_valid(uint64_t h, std::string_view key, uint32_t sec, reclaim_list& rl, item**& link,
                   bool reclaim = false) noexcept;
  void notify_store(const item* it) noexcept;
  void notify_touch(const item* it) noexcept;
  uint64_t next_cas() noexcept;
  // The CAS a client sees of an item's `cas` (0 with cas_enabled off).
  uint64_t client_cas(uint64_t cas) const noexcept { return cfg_.cas_enabled ? cas : 0; }
  // A client's explicit CAS (meta E), or the next from the counter: with cas_enabled off
  // memcached ignores E, and the item keeps a counter CAS (flush_all orders by it).
  uint64_t new_cas(uint64_t explicit_cas) noexcept {
    return explicit_cas && cfg_.cas_enabled ? explicit_cas : next_cas();
  }
  uint64_t next_lease_token() noexcept;

  // Allocates an item (plain or large), charges it to memory, evicting inline if needed.
  // nullptr on OutOfMemory. Never under a lock.
  item* alloc_charged(std::string_view key, size_t value_len, uint32_t flags = 0) noexcept;
  // An item from the region, evicting (with -M: reclaiming expired and flushed items) in
  // the policy's order until a block fits: rounds of twice the last round's bytes, so a
  // block of any size is found within a bounded number of rounds. Not charged yet.
  // nullptr if nothing more can be freed (store.cc). Never under a lock.
  item* alloc_item(std::string_view key, size_t value_len) noexcept;
  bool charge(item* it) noexcept;
  // Samples buckets from cursor_ and evicts the coldest items until usage <= target.
  bool evict_inline(uint64_t target) noexcept;
  // With evictions off (memcached -M): the same sample, unlinking only expired and
  // flushed items, until usage <= target (gc.cc).
  bool reclaim_inline(uint64_t target) noexcept;
  // s3fifo's eviction (s3fifo.cc): frees memory until usage <= target, from the small
  // queue's end while it holds its share, else by main's CLOCK hand. Bounded work; false
  // if still above. [no lock held; bucket locks and queue shard locks one at a time]
  // `evicted`: how many it evicted, added (the GC sweep's count).
  bool s3fifo_evict(uint64_t target, bool by_gc, uint64_t* evicted = nullptr) noexcept;
  // Under the key's bucket lock, as a store links `it` in place of `live` (or of nothing):
  // which queue it joins (true: small, to be pushed by small_push after the unlock).
  bool s3fifo_admit(item* it, const item* live, uint64_t h) noexcept;
  // Queues an item linked into small (no lock held; it may be gone already: see small_fifo.h).
  void small_push(item* it, uint64_t h) noexcept;
  // Settles an entry taken from the small queue's end: moves its item to main if it was
  // read (or if !may_evict), else evicts it into the ghost set. True if it evicted it.
  bool small_settle(const small_fifo::entry& e, bool may_evict, bool by_gc) noexcept;
  // One bucket of main's CLOCK hand (evict_cursor_): items read since its last pass lose
  // a read and stay; the others are evicted while usage is above `target`. force: evict
  // without a second chance (a hand that found nothing for long); cold_only: evict only
  // kCold items, leaving the others as they are. Small items are left but by force.
  enum class hand_mode { cold_only, normal, force };
  // Returns the number evicted.
  uint64_t main_hand_step(uint64_t target, bool by_gc, hand_mode mode, uint32_t sec) noexcept;
  // Under the item's bucket lock: it leaves the small queue (for main, or unlinked).
  void small_leave(const item* it) noexcept;
  // Under the item's bucket lock: a read or touch (clock: counter to 0; s3fifo: +1, to 3).
  void note_access(item* it) noexcept {
    if (!s3fifo_) {
      it->clock_ = 0;
      return;
    }
    it->clock_ = static_cast<uint8_t>(std::min(s3fifo_reads(it) + 1, 3u));  // the age bits to 0
    if (it->bits_ & kCold) cold_leave(it);
  }
  // s3fifo: an item's reads since it joined its queue or main's hand last passed (0..3).
  static unsigned s3fifo_reads(const item* it) noexcept { return it->clock_ & 3u; }
  // Under the item's bucket lock: it loses kCold (read, or unlinked).
  void cold_leave(item* it) noexcept;
  // The same for the large-value disk budget: evicts the coldest large values until an
  // extent of `need` bytes fits (0: until usage is within the budget). `by_gc`: the GC
  // sweep is the caller (a lowered budget), not a store; it says which counter to bump.
  bool evict_large_inline(uint64_t need, bool by_gc = false) noexcept;
  // `target`: the memory usage to evict down to (not large_only).
  bool evict_sampled(bool large_only, uint64_t need, bool by_gc, uint64_t target = 0) noexcept;
  // Counts one eviction (a placeholder is no item to a client: not counted).
  void count_eviction(const item* it, bool by_gc) noexcept;
  // Per-class figures (class_stats.h). class_link sets the item's class and counts it in;
  // class_unlink counts it out. Both under the item's bucket lock, only for real items
  // (not lease placeholders), next to the curr_items counts.
  unsigned class_of(const item* it) const noexcept;
  void class_link(item* it) noexcept;
  void class_unlink(const item* it) noexcept;
  void class_account(const item* it, unsigned cls, uint64_t total, int64_t sign) noexcept;
  void count_class_eviction(const item* it, uint32_t sec, bool direct) noexcept;
  // reclaimed / expired_unfetched of an invalid item being unlinked (store.cc).
  void count_reclaimed(const item* it, remove_reason why) noexcept;
  void class_count(const item* it, class_counter c) noexcept { class_stats_.add(it->slab_class_, c); }
  // A new large value (file I/O: no lock held), evicting cold large values when the disk
  // budget is full. nullptr on failure.
  large_value* create_large(std::span<const char> value) noexcept;
  unsigned threshold_for(const histogram& h, uint64_t need) const noexcept;
  // The GC sweep's sample of the items there are now, by score (gc.cc).
  uint64_t gc_sample(bool disk, uint32_t sec, histogram& h) noexcept;

  // `flags` are used only when a miss vivifies (opts.vivify).
  void set_rmw(std::string_view key, store_mode mode, std::span<const char> value, uint32_t flags, const store_now& now,
               const store_options& opts, store_result& res);
  // get() with stats counting optional (read-modify-write helpers read without counting).
  void get_impl(std::string_view key, const store_now& now, const get_options& opts, get_result& res, bool count);
  // set's steps (store_write.cc; the contracts are above each).
  item* make_item(std::string_view key, std::span<const char> value, uint32_t flags) noexcept;
  bool set_locked(std::string_view key, store_mode mode, item* it, uint64_t h, uint32_t sec, uint32_t deadline,
                  const store_options& opts, store_result& res) noexcept;
  store_status store_verdict(store_mode mode, const store_options& opts, const item* old, const item* live,
                             bool& stale_store) const noexcept;
  void count_store(store_mode mode, const store_options& opts, store_status status, const item* it,
                   const item* live) noexcept;
  // get_impl's steps (store_get.cc, inline there; the contracts are above each).
  item* find_readable(uint64_t h, std::string_view key, uint32_t sec, bool count, bool& counted_expiry,
                      reclaim_list& rl, bool& hidden) noexcept;
  size_t read_hit(item* it, const store_now& now, uint32_t sec, const get_options& opts, get_result& res);
  bool lease_miss(item* placeholder, uint64_t h, item*& spare, const store_now& now, uint32_t sec,
                  get_result& res) noexcept;
  bool vivify_miss(uint64_t h, item*& spare, const store_now& now, uint32_t sec, const get_options& opts,
                   get_result& res) noexcept;
  void count_read(const get_options& opts, const get_result& res, unsigned hit_class) noexcept;

  store_config cfg_;  // fixed after construction; the live limits below override its copies
  // -e FILE: what the constructor learned of it (memory_file.h); path "" without one.
  memory_file_state mf_;
  bool mf_saved_ = false;  // save_memory_file wrote it clean: ~store leaves the region alone
  // Where every item lives (item_region.h), and with the charge, what frees one needs.
  item_region region_;
  item_home home_;
  std::atomic<uint64_t> memory_limit_;
  std::atomic<uint64_t> reserved_{0};  // set_reserved_bytes
  std::atomic<uint64_t> item_size_max_;
  std::atomic<uint64_t> large_value_threshold_;
  std::atomic<uint64_t> lease_interval_ms_;
  std::atomic<bool> evictions_;  // memcached -M: false
  uint64_t seed_;
  hash_table table_;                             // the chains and their locks (hash_table.h)
  change_observer* observer_ = nullptr;          // set before sharing; immutable afterwards
  eviction_observer* evict_observer_ = nullptr;  // set before sharing; immutable afterwards
  // Where large values live; null if its file could not be created (large stores then
  // fail). Shared only with the caller that handed it in (see the constructor); ~store
  // frees every item first, so no value outlives the store's hold on it.
  std::shared_ptr<large_arena> arena_;

  std::atomic<uint64_t> cas_counter_{0};
  std::atomic<uint64_t> lease_counter_;
  std::atomic<uint64_t> oldest_cas_{0};        // flush_all: cas <= this is invalid
  std::atomic<uint32_t> oldest_live_{0};       // flush_all: stored <= this is invalid once passed
  std::atomic<uint64_t> evict_cursor_{0};      // inline eviction sampling position
  std::atomic<bool> expiry_by_master_{false};  // see set_expiry_by_master
  // s3fifo (cfg_.eviction): the small queue, its items' memory charge (what decides which
  // queue evicts), and the ghost set. Both structures are tiny with clock.
  const bool s3fifo_;
  small_fifo small_;
  ghost_set ghost_;
  std::atomic<int64_t> small_bytes_{0};
  std::atomic<int64_t> cold_bytes_{0};  // memory charge of the kCold items

  // GC state: the gc_sweep caller only (single-threaded by contract). One per budget the
  // sweep keeps under its watermarks: memory (every item's bytes) and the arena's disk
  // (large items' extents).
  struct gc_budget {
    bool evicting = false;             // above the high watermark, until under the low one or the pass ends
    unsigned threshold = kScoreCount;  // evict scores at or above this while evicting
  };
  gc_budget gc_memory_;
  gc_budget gc_disk_;
  // The sweep's watermarks, in bytes (gc_marks_now).
  struct gc_marks {
    uint64_t high = 0, low = 0;            // of the memory limit
    uint64_t disk_high = 0, disk_low = 0;  // of the arena's disk budget
  };
  // gc_sweep's steps (gc.cc; the contracts are above each).
  gc_marks gc_marks_now() const noexcept;
  void gc_start_evicting(gc_budget& g, bool disk, uint64_t used, uint64_t hi, uint64_t lo, uint32_t sec) noexcept;
  void gc_sweep_bucket(uint64_t b, uint32_t sec, const gc_marks& m, gc_stats& out,
                       std::array<uint64_t, kSlabClassMax>& checked) noexcept;
  void gc_count(const gc_stats& out, const std::array<uint64_t, kSlabClassMax>& checked, gc_stats& total) noexcept;
  uint64_t gc_sample_offset_ = 0;  // where the threshold sample's runs start (gc_sample)

  store_stats stats_;
  slab_classes classes_;     // immutable
  class_stats class_stats_;  // sharded per thread, see class_stats.h
  // The server second of the last GC sweep call: evicted_time for evictions made by a
  // store, which is given no clock. Written by the sweep (one caller), read by any.
  std::atomic<uint32_t> last_sec_{0};
  // GC pass state (gc_sweep's caller only): the least recent access seen per class in
  // the pass under way, published to class_stats_ when it completes.
  std::array<uint32_t, kSlabClassMax> gc_oldest_atime_{};
};

}  // namespace ithaca::store
