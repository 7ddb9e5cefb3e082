// Options and results of the store operations. Plain structs, no exceptions; designed around
// the meta protocol, onto which the protocol layer maps every classic command.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "item_ref.h"
#include "large_value.h"
#include "slab_classes.h"

namespace ithaca::store {

inline constexpr size_t kKeyMax = 250;

// Which items go when memory is full (INTERNALS.md, "Eviction"). s3fifo: S3-FIFO (Yang
// et al., SOSP 2023): new items wait in a small FIFO (a tenth of the memory); those read
// there move to main, the others go and their hashes are remembered a while (a key
// stored again soon goes straight to main); main is a CLOCK whose hand gives an item
// one more pass per read (up to 3). clock: one CLOCK over every item, the hand sampling
// buckets and evicting the least recently read (the policy before s3fifo).
enum class eviction_policy : uint8_t { s3fifo, clock };

struct store_config {
  // Power of two, fixed for the life of the store: with one lock per bucket a resize would
  // have to take every lock (yrmcds: "resizing is almost impossible"), so size it big.
  uint64_t bucket_count = uint64_t{1} << 16;
  // The key hash's seed; 0 (the default): a random one per store (a client cannot aim
  // its keys at one bucket). Tests of eviction order set one: main's hand walks the
  // buckets in order, so with a random seed which item it meets first changes per run.
  uint64_t hash_seed = 0;
  uint64_t memory_limit = uint64_t{64} << 20;  // bytes of items (headers, keys, values)
  uint64_t item_size_max = uint64_t{1} << 20;  // header + key + value
  uint64_t large_value_threshold = 0;          // values larger go to a temp file; 0 = off
  std::string temp_dir = "/tmp";
  uint64_t large_value_disk_limit = uint64_t{1} << 30;  // the large values' disk budget
  uint64_t lease_interval_ms = 10000;                   // at most one lease token per key per interval
  uint32_t lease_ttl_sec = 10;                          // lifetime of a lease placeholder
  unsigned gc_high_watermark_pct = 90;                  // GC starts evicting above this share of the limit
  unsigned gc_low_watermark_pct = 80;                   // ... and stops below this one
  // memcached's size classes, only to report items by class (class_stats.h). Their
  // `cas` is the store's cas_enabled below, whatever is set here.
  slab_class_config slab_classes;
  // memcached -e FILE: the item region is this file, kept across a graceful stop
  // (memory_file.h); "" = anonymous memory.
  std::string memory_file;
  // A takeover (ithaca --takeover): the process being taken over still maps and locks
  // memory_file, so this one starts a new file at that path (memory_file_prepare).
  bool memory_file_replace_in_use = false;
  // -L: the hash table's mappings ask for transparent huge pages (hash_table.h).
  bool large_pages = false;
  // memcached -M (false): a store that does not fit is refused (OutOfMemory) rather than
  // evicting others, inline or by the GC sweep; expired and flushed items are still
  // reclaimed. Live: set_evictions.
  bool evictions = true;
  // memcached -C (false): clients see CAS 0 everywhere and their CAS values compare as
  // with memcached -C (store.h: cas_enabled). Fixed for the life of the store.
  bool cas_enabled = true;
  // cache.eviction. Fixed for the life of the store.
  eviction_policy eviction = eviction_policy::s3fifo;
};

// ---- get (get, gets, gat, gats, touch via get_options, mg, lease-get) ----

enum class get_status : uint8_t {
  Hit,
  Miss,
  LeaseToken,  // miss; result.lease_token is the caller's token to lease-set with
  LeaseWait,   // hot miss: a token was issued less than lease_interval ago; wait and retry
  BadKey,      // empty or longer than 250 bytes
};

struct get_options {
  bool want_value = true;
  bool bump = true;    // reset CLOCK, mark fetched, update last access
  bool touch = false;  // gat / mg T: set exptime to `exptime`
  int64_t exptime = 0;
  bool vivify = false;  // mg N: on miss create an empty item with vivify_exptime
  int64_t vivify_exptime = 0;
  uint64_t vivify_cas = 0;         // mg E: the vivified item's CAS; 0 = next from the counter
  bool vivify_key_binary = false;  // mg b: the vivified item's key came in base64
  uint32_t recache_threshold = 0;  // mg R: remaining TTL below this wins a recache; 0 = off
  bool lease = false;              // lease-get: a miss hands out a token (or says wait)
  // gat / binary touch: count touch_hits / touch_misses instead of get_hits / get_misses,
  // as memcached does for its get-and-touch commands.
  bool count_as_touch = false;
  // With want_value: a hit on a value in memory pins the item (get_result::pinned)
  // instead of copying its value under the bucket lock. The caller copies or references
  // the bytes after the call and drops the pin when they are written (item_ref.h).
  bool pin = false;
  // ... but a value of at most this many bytes is copied into get_result::value even so:
  // the caller would copy it anyway (the reply buffer copies small values), and a memcpy
  // of a few hundred bytes costs less than the pin's two locked instructions (taken here,
  // dropped by the writer).
  uint32_t copy_at_most = 0;
  // With cas_enabled off (memcached -C): still the item's own CAS in the result, for a
  // caller that uses it as a token of its own (a lease over a stale item), not a client's.
  bool item_cas = false;
  // Count the lookup in get_hits / get_misses and its class's figures. The l1l2 route's
  // L1 does not: the client's request is counted once, by the outcome it gets from the
  // router (flow/routed_counts.h), whether L1 or L2 answered it.
  bool count = true;
};

struct get_result {
  get_status status = get_status::Miss;
  uint32_t flags = 0;
  uint64_t cas = 0;
  int64_t ttl = -1;             // remaining seconds, -1 = never expires
  uint32_t last_access = 0;     // seconds since last access (mg l)
  bool fetched_before = false;  // mg h
  bool win = false;             // mg W: this caller should recache
  bool stale = false;           // mg X
  bool win_sent = false;        // mg Z: someone else already won
  bool vivified = false;        // the miss created an empty item (mg N)
  bool key_binary = false;      // the item was stored with a base64 key (meta b)
  uint64_t lease_token = 0;
  uint64_t value_size = 0;  // the value's length on a hit, even without want_value (mg s)
  // The value: copied into `value` (the caller keeps it across calls to reuse its
  // capacity), or with get_options::pin the item itself, `pinned`, or for values kept in
  // a file, `large` to read after the call. get() drops the pin a previous call left.
  std::string value;
  large_value_ref large;
  item_ref pinned;

  // The value in memory, wherever get() put it.
  std::string_view value_view() const noexcept { return pinned ? pinned.value() : std::string_view(value); }
};

// ---- store (set, add, replace, append, prepend, cas, ms, lease-set) ----

enum class store_mode : uint8_t { Set, Add, Replace, Append, Prepend, Cas };

enum class store_status : uint8_t {
  Stored,
  NotStored,    // add on a live key, replace/append/prepend on a missing one, bad lease
  Exists,       // CAS mismatch
  NotFound,     // CAS on a missing key
  TooLarge,     // "SERVER_ERROR object too large for cache"
  OutOfMemory,  // "SERVER_ERROR out of memory storing object" (also temp file failures)
  BadKey,
};

struct store_options {
  uint64_t compare_cas = 0;   // Cas mode; with other modes (meta C) compare if non-zero
  bool invalidate = false;    // meta I: a CAS older than the item's stores but marks stale
  uint64_t explicit_cas = 0;  // meta E: the new item's CAS; 0 = next from the counter
  uint64_t lease_token = 0;   // lease-set; 0 = not a lease-set
  bool key_binary = false;    // meta b: the key came in base64 (mg k and me print it so)
  // ms MA/MP with N: an append or prepend that misses creates the item from its data,
  // with the set's flags and this exptime (memcached 1.6.45).
  bool vivify = false;
  int64_t vivify_exptime = 0;
  // Internal (append/prepend/arithmetic read-modify-write): keep the old item's flags and
  // exptime, and do not count cas stats.
  bool keep_flags = false;
  bool keep_exptime = false;
  bool internal = false;
  // With cas_enabled off (memcached -C): compare_cas is the item's own CAS as a get with
  // get_options::item_cas saw it (a lease over a stale item), not a client's.
  bool item_cas = false;
  // Arithmetic whose result fits the old value's length: memcached writes it over the
  // old item (do_add_delta), which makes no new item, so `total_items` does not count it.
  bool in_place = false;
};

struct store_result {
  store_status status = store_status::NotStored;
  uint64_t cas = 0;
  uint64_t value_size = 0;  // when stored: the value's length (append/prepend: the whole)
};

// ---- arithmetic (incr, decr, ma) ----

enum class arith_op : uint8_t { Incr, Decr };

enum class arith_status : uint8_t {
  Ok,
  NotFound,
  NonNumeric,  // "CLIENT_ERROR cannot increment or decrement non-numeric value"
  Exists,      // compare_cas mismatch
  OutOfMemory,
  BadKey,
};

struct arith_options {
  uint64_t compare_cas = 0;
  bool vivify = false;   // ma N: create with `initial` on miss
  uint64_t initial = 0;  // ma J
  int64_t vivify_exptime = 0;
  bool touch = false;  // ma T: update exptime
  int64_t exptime = 0;
  uint64_t explicit_cas = 0;  // ma E: the new CAS; 0 = next from the counter
};

struct arith_result {
  arith_status status = arith_status::NotFound;
  uint64_t value = 0;
  uint64_t cas = 0;
  // Remaining seconds to live of the item before this operation (-1 = never): ma prints
  // 't' as it was before a later 'T' in the request applies. -1 when vivified.
  int64_t old_ttl = -1;
  bool vivified = false;
};

// ---- remove (delete, md) ----

enum class remove_status : uint8_t {
  Deleted,
  NotFound,
  Exists,
  BadKey,
  OutOfMemory,  // md x could not allocate the emptied item
};

struct remove_options {
  uint64_t compare_cas = 0;
  bool invalidate = false;  // md I: mark stale (and set exptime if touch) instead of removing
  bool touch = false;       // md T (with I, or with x for the emptied item's exptime)
  int64_t exptime = 0;
  // md x: keep the item but replace its value with an empty one, with these client flags
  // and exptime T (none: never expires) and the old CAS unless E gives one (1.6.45).
  bool remove_value = false;
  uint32_t flags = 0;
  uint64_t explicit_cas = 0;  // md E: the CAS after I or x; 0 = next from the counter (I)
};

enum class touch_status : uint8_t { Touched, NotFound, BadKey };

// A live item as shown to change observers and scans. Valid only during the call.
struct item_view {
  std::string_view key;
  uint32_t flags;
  uint32_t deadline;  // internal deadline; see store_time.h deadline_to_unix
  uint64_t cas;
  std::string_view value;  // empty if large
  // Non-null if the value is in a file. To read it later (never under the lock), take a
  // reference: large_value_ref ref((v.large->ref(), v.large)).
  large_value* large;
};

// One live item's metadata, for `lru_crawler metadump` / `mgdump` (store::scan_meta).
struct item_meta {
  std::string_view key;
  uint32_t deadline;  // internal deadline (store_time.h); kNever: no expiry
  uint32_t atime;     // last access, server seconds (the deadline's units)
  uint64_t cas;
  uint32_t flags;
  uint64_t value_len;  // client-visible length (a large value's file size)
  bool fetched;        // read since stored (memcached ITEM_FETCHED)
  bool key_binary;     // stored with a base64 key (meta b)
  // The item's own CAS, whatever cas_enabled says: a later store has a larger one (but
  // for meta E's), so it orders items newest first (stats cachedump).
  uint64_t order;
};

enum class remove_reason : uint8_t { Deleted, Expired, Evicted, Flushed };

// Called UNDER the bucket lock of the key on every change, so a per-key order of records is
// the order of changes. Implementations must only copy and enqueue, lock-free, bounded;
// never block, allocate unboundedly, or call back into the store.
class change_observer {
 public:
  virtual ~change_observer() = default;
  virtual void on_store(const item_view& item) noexcept = 0;
  virtual void on_remove(std::string_view key, remove_reason why) noexcept = 0;
  // Only the exptime changed (touch, gat, mg T): yrmcds replicates it as a Touch.
  virtual void on_touch(const item_view& item) noexcept { on_store(item); }
};

// An item the memory budget evicts (inline in a store, or the GC sweep), for
// `watch evictions`. Called UNDER the item's bucket lock, like change_observer,
// with the same rules: copy and enqueue, never block or call into the store.
struct evicted_item {
  std::string_view key;
  uint32_t flags;
  uint64_t value_size;
  uint32_t deadline;  // internal server seconds, 0 = never (store_time.h)
  uint32_t atime;     // last access, internal server seconds
  bool fetched;
  unsigned slab_class;  // its memcached size class (slab_classes.h)
};

class eviction_observer {
 public:
  virtual ~eviction_observer() = default;
  virtual void on_evict(const evicted_item& item) noexcept = 0;
};

// Output of one gc_sweep call; the caller accumulates.
struct gc_stats {
  uint64_t visited = 0;
  uint64_t reclaimed = 0;
  uint64_t expired_unfetched = 0;
  uint64_t evictions = 0;
  uint64_t evicted_unfetched = 0;
  uint64_t large_evictions = 0;  // of `evictions`, items whose value was in the arena
};

}  // namespace ithaca::store
