// item: one cache entry, one block of the store's item region (item_region.h): a 48-byte
// header, the key, then the value.
//
// For 1M items of 100 bytes with ~10-byte keys this is ~158 bytes requested, a 168-byte
// block (the region's 8-byte block header, rounded to 8); memcached spends a 48-56 byte
// header plus "\r\n" plus slab-class rounding (a 192-byte chunk for the same item). The
// header was 40 bytes until values were sent from the item itself (zero-copy gets): refs_
// costs 8 bytes per item (4 for the count, 4 for the block's size).
//
// Every field but refs_ is protected by the lock of the bucket the item is linked in; the
// key and the value are immutable once the item is linked. refs_ counts references: one for
// the chain the item is linked in (or for the thread that allocated it, until it links it),
// plus one per pin, a reader's hold on the value (item_pin, taken under the bucket lock, so
// only on a linked item). Whoever drops the last one frees the item, outside any lock: the
// thread that unlinked it, or the reader whose write of the value finished last.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "item_region.h"
#include "large_value.h"

namespace ithaca::store {

enum item_bits : uint8_t {
  kFetched = 1 << 0,      // read at least once since stored (memcached ITEM_FETCHED)
  kStale = 1 << 1,        // invalidated by meta I: served with X until replaced
  kWinSent = 1 << 2,      // a recache "win" (W) was handed out; others get Z
  kLarge = 1 << 3,        // value area holds a large_value* (the value lives in a file)
  kPlaceholder = 1 << 4,  // lease placeholder: no value; cas_ is the lease token and the
                          // value area holds the token's issue time in ms
  kKeyBinary = 1 << 5,    // stored with a base64 key (meta b): mg k and me print it encoded
  kSmall = 1 << 6,        // s3fifo: in the small queue (small_fifo.h), else in main
  kCold = 1 << 7,         // s3fifo: in main, pushed on unread from a full small queue and
                          // not read since: the small queue's to evict (s3fifo.cc)
};

struct item {
  item* next_;          // bucket chain                            [bucket lock]
  uint64_t cas_;        // CAS unique; lease token if placeholder    [bucket lock]
  uint32_t deadline_;   // expiry, internal server seconds (store_time.h) [bucket lock]
  uint32_t atime_;      // last access, server seconds              [bucket lock]
  uint32_t stime_;      // last store, server seconds (flush_all)   [bucket lock]
  uint32_t flags_;      // client flags                             [bucket lock]
  uint32_t value_len_;  // bytes in the value area                  [immutable]
  uint8_t key_len_;     // 1..250                                   [immutable]
  uint8_t clock_;       // clock: +1 per hand visit, 0 on access. s3fifo (store.h:
                        // eviction_policy): bits 0-1 reads (0..3, -1 per pass of main's
                        // hand), bits 2-7 clock's counter for the large values' disk
                        // budget (+1 per visit of the sweep or its hand, to 63); an
                        // access sets reads + 1 and the counter 0 [bucket lock]
  uint8_t bits_;        // item_bits                                [bucket lock]
  uint8_t slab_class_;  // memcached size class (slab_classes.h), set when linked [bucket lock]
  uint32_t refs_;       // link + pins; only through std::atomic_ref     [lock-free, any thread]
  uint32_t block_;      // the region block's whole size: what the item costs     [immutable]

  char* key_data() noexcept { return reinterpret_cast<char*>(this + 1); }
  const char* key_data() const noexcept { return reinterpret_cast<const char*>(this + 1); }
  std::string_view key() const noexcept { return {key_data(), key_len_}; }
  char* value_data() noexcept { return key_data() + key_len_; }
  const char* value_data() const noexcept { return key_data() + key_len_; }
  std::string_view value() const noexcept { return {value_data(), value_len_}; }

  bool is_large() const noexcept { return bits_ & kLarge; }
  bool is_placeholder() const noexcept { return bits_ & kPlaceholder; }

  large_value* large() const noexcept {
    large_value* v;
    std::memcpy(&v, value_data(), sizeof v);
    return v;
  }
  uint64_t lease_issued_ms() const noexcept {
    uint64_t ms;
    std::memcpy(&ms, value_data(), sizeof ms);
    return ms;
  }
  void set_lease_issued_ms(uint64_t ms) noexcept { std::memcpy(value_data(), &ms, sizeof ms); }

  // Length of the client-visible value.
  uint64_t data_size() const noexcept { return is_large() ? large()->size() : value_len_; }
};

static_assert(sizeof(item) == 48, "the item header: 40 bytes of fields, the pin count, padding");

// Where a store's items live and what they are charged to: freeing one needs both.
struct item_home {
  item_region& region;
  std::atomic<int64_t>& bytes;  // the store's memory charge (store_stats::bytes)
};

// Allocates an item in `region` with the key copied and value_len bytes of uninitialised
// value area; header zeroed, one reference (the caller's, handed to the chain when it links
// the item). nullptr if the region has no room (the caller evicts and asks again). Takes
// the region's lock: never under a bucket lock.
// `bound`: item_region::alloc's.
item* item_alloc(item_region& region, std::string_view key, size_t value_len, uint64_t bound) noexcept;

// What an item of this key and value length would cost (its block).
inline uint64_t item_cost(size_t key_len, size_t value_len) noexcept {
  return item_region::block_size(sizeof(item) + key_len + value_len);
}

// Bytes the item really costs (its block, plus the large_value object if any: a malloc
// block of its own, outside the region).
size_t item_mem(const item* it) noexcept;

// Frees the item and drops its large_value reference, whatever its count: only for an item
// no one else can reach (never linked, or the store's destructor). Never under a bucket lock.
void item_free(item* it, item_region& region) noexcept;

// A reader's pin: one more reference. Only under the lock of the bucket the item is linked
// in (the chain's reference keeps the count above zero while it is taken).
inline void item_pin(item* it) noexcept {
  std::atomic_ref<uint32_t>(it->refs_).fetch_add(1, std::memory_order_relaxed);
}

// Drops one reference; the last frees the item (item_free) and takes item_mem(it) off
// the home's charge, so a pinned item that was unlinked counts against the memory limit
// until its last reader lets go (as in memcached). [any thread, no lock held: it may free
// and close a large value's extent]
void item_release(item* it, item_home& home) noexcept;

}  // namespace ithaca::store
