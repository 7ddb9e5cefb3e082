// store: the read path. get() and get_impl, the one lookup behind every read (get, gets,
// gat, mg, lease-get, and the read of a read-modify-write), and the steps it is made of.
#include <cstring>

#include "store.h"
#include "store_inline.h"

namespace ithaca::store {

void store::get(std::string_view key, const store_now& now, const get_options& opts, get_result& res) {
  get_impl(key, now, opts, res, opts.count);
  if (!opts.item_cas) res.cas = client_cas(res.cas);
}

namespace {

// A read's result before the lookup: a miss with nothing in it. res.value keeps its
// capacity; a previous call's pin is dropped here, before the lock (it may free the item).
inline void reset_result(get_result& res) {
  res.status = get_status::Miss;
  res.flags = 0;
  res.cas = 0;
  res.ttl = -1;
  res.last_access = 0;
  res.fetched_before = res.win = res.stale = res.win_sent = res.vivified = false;
  res.key_binary = false;
  res.lease_token = 0;
  res.value_size = 0;
  res.value.clear();  // keeps capacity
  res.large.reset();
  res.pinned.reset();
}

}  // namespace

// Under the key's bucket lock: the key's item a read may see, or nullptr. An expired or
// flushed item is unlinked onto `rl`; one kept past its deadline for the master is left
// linked but not returned (`hidden`: the read is a miss and creates nothing over it). The
// first expiry seen is counted once per read (`counted_expiry`) when `count`.
inline item* store::find_readable(uint64_t h, std::string_view key, uint32_t sec, bool count, bool& counted_expiry,
                                  reclaim_list& rl, bool& hidden) noexcept {
  item** link = find_link(h, key);
  item* it = *link;
  remove_reason why;
  if (it && invalid(it, sec, why)) {
    if (count && !it->is_placeholder() && !counted_expiry) {
      stats_.add(why == remove_reason::Expired ? store_counter::get_expired : store_counter::get_flushed);
      counted_expiry = true;
    }
    unlink(link, rl, why);
    it = nullptr;
  }
  hidden = false;
  if (it && hidden_expired(it, sec)) {
    if (count && !counted_expiry) {
      stats_.add(store_counter::get_expired);
      counted_expiry = true;
    }
    hidden = true;
    it = nullptr;
  }
  return it;
}

// Under the bucket lock of `it`, a real item: fills `res` with a hit (touch, pin or copy of
// the value, the W/X/Z recache bits, the CLOCK reset). Returns the capacity res.value must
// grow to first, or 0 once it is a hit: the string is never grown (malloc'd) under the lock.
inline size_t store::read_hit(item* it, const store_now& now, uint32_t sec, const get_options& opts, get_result& res) {
  const bool pin = opts.want_value && opts.pin && !it->is_large() && it->value_len_ > opts.copy_at_most;
  if (opts.want_value && !pin && !it->is_large() && it->value_len_ > res.value.capacity())
    return it->value_len_;  // growing the string would malloc under the lock: outside, retry
  res.status = get_status::Hit;
  if (opts.touch) {
    it->deadline_ = to_deadline(opts.exptime, now);
    notify_touch(it);
  }
  res.flags = it->flags_;
  res.cas = it->cas_;
  res.ttl = ttl_remaining(it->deadline_, sec);
  res.last_access = sec > it->atime_ ? sec - it->atime_ : 0;
  res.fetched_before = it->bits_ & kFetched;
  res.key_binary = it->bits_ & kKeyBinary;
  res.value_size = it->data_size();
  if (pin) {
    // No copy under the lock: the caller reads the item itself.
    item_pin(it);
    res.pinned = item_ref(it, &home_);
  } else if (opts.want_value) {
    if (it->is_large()) {
      it->large()->ref();
      res.large = large_value_ref(it->large());
    } else {
      res.value.resize(it->value_len_);  // within capacity: memcpy only
      std::memcpy(res.value.data(), it->value_data(), it->value_len_);
    }
  }
  if (it->bits_ & kStale) {
    res.stale = true;
    if (it->bits_ & kWinSent) {
      res.win_sent = true;
    } else {
      res.win = true;
      it->bits_ |= kWinSent;
    }
  } else if (it->bits_ & kWinSent) {
    res.win_sent = true;
  } else if (opts.recache_threshold && it->deadline_ != kNever && res.ttl < int64_t{opts.recache_threshold}) {
    res.win = true;
    it->bits_ |= kWinSent;
  }
  if (opts.bump) {
    note_access(it);
    it->atime_ = sec;
    it->bits_ |= kFetched;
  }
  return 0;
}

// Under the key's bucket lock, a lease-get that found no item (`placeholder` null) or a live
// placeholder: a wait while the outstanding token is fresh, else a new token, on the
// placeholder or on `spare` linked as a new one (taken: spare becomes null). False when a
// placeholder is needed and `spare` is null: allocate one outside the lock and retry.
inline bool store::lease_miss(item* placeholder, uint64_t h, item*& spare, const store_now& now, uint32_t sec,
                              get_result& res) noexcept {
  if (placeholder) {  // a live placeholder: a token is out
    // Each worker's clock is its loop's cached snapshot, so a token issued on
    // another worker may carry a later time than ours: that is a fresh token
    // (waiting), never a negative age wrapped to a huge one.
    const uint64_t issued = placeholder->lease_issued_ms();
    if (now.ms < issued || now.ms - issued < lease_interval_ms_.load(std::memory_order_relaxed)) {
      res.status = get_status::LeaseWait;
    } else {
      placeholder->cas_ = next_lease_token();
      placeholder->set_lease_issued_ms(now.ms);
      placeholder->deadline_ = server_sec(now) + cfg_.lease_ttl_sec;
      res.status = get_status::LeaseToken;
      res.lease_token = placeholder->cas_;
    }
    return true;
  }
  if (!spare) return false;
  spare->bits_ = kPlaceholder;
  spare->cas_ = next_lease_token();
  spare->set_lease_issued_ms(now.ms);
  spare->deadline_ = sec + cfg_.lease_ttl_sec;
  spare->stime_ = spare->atime_ = sec;
  link_first(h, spare);
  stats_.add(store_counter::lease_placeholders);
  res.status = get_status::LeaseToken;
  res.lease_token = spare->cas_;
  spare = nullptr;
  return true;
}

// Under the key's bucket lock, a miss with opts.vivify (meta N): links `spare` as an empty
// item this caller wins (later readers see Z), counted and recorded like a store. False when
// `spare` is null: allocate one outside the lock and retry.
inline bool store::vivify_miss(uint64_t h, item*& spare, const store_now& now, uint32_t sec, const get_options& opts,
                               get_result& res) noexcept {
  if (!spare) return false;
  spare->deadline_ = to_deadline(opts.vivify_exptime, now);
  spare->cas_ = new_cas(opts.vivify_cas);
  spare->stime_ = spare->atime_ = sec;
  // This caller wins; later readers see Z.
  spare->bits_ = static_cast<uint8_t>(kWinSent | (opts.vivify_key_binary ? kKeyBinary : 0));
  link_first(h, spare);
  stats_.add(store_counter::curr_items);
  stats_.add(store_counter::total_items);
  class_link(spare);
  notify_store(spare);
  res.vivified = res.win = true;
  res.key_binary = opts.vivify_key_binary;
  res.cas = spare->cas_;
  res.ttl = ttl_remaining(spare->deadline_, sec);
  spare = nullptr;
  return true;
}

// A counted read's hit or miss (as a touch for gat), store-wide and in the hit's class.
// After the lock.
inline void store::count_read(const get_options& opts, const get_result& res, unsigned hit_class) noexcept {
  if (opts.count_as_touch) {
    stats_.add(res.status == get_status::Hit ? store_counter::touch_hits : store_counter::touch_misses);
    if (res.status == get_status::Hit) class_stats_.add(hit_class, class_counter::touch_hits);
    return;
  }
  switch (res.status) {
    case get_status::Hit:
      stats_.add(store_counter::get_hits);
      class_stats_.add(hit_class, class_counter::get_hits);
      break;
    case get_status::LeaseToken:
      stats_.add(store_counter::lease_tokens);
      stats_.add(store_counter::get_misses);
      break;
    case get_status::LeaseWait:
      stats_.add(store_counter::lease_waits);
      stats_.add(store_counter::get_misses);
      break;
    default: stats_.add(store_counter::get_misses); break;
  }
}

// The one lookup behind every read (get, gets, gat, mg, lease-get, and the
// read of a read-modify-write with count = false): under the key's bucket
// lock it unlinks an expired or flushed item, hides one kept for the master,
// pins a hit's item (opts.pin: res.pinned, read after the lock) or copies its
// value into res.value (retrying after growing the buffer
// outside the lock rather than allocating under it), applies touch, recache
// (W/X/Z), vivify or a lease placeholder (allocated before the lock, freed
// after it if unused), and resets the item's CLOCK counter (opts.bump). [any thread; exactly one
// bucket lock at a time, no allocation, I/O or suspension under it; a large
// value is returned as a ref to read after the call] Loops only to retry
// after such a growth or allocation.
void store::get_impl(std::string_view key, const store_now& now, const get_options& opts, get_result& res, bool count) {
  reset_result(res);
  if (!valid_key(key)) {
    res.status = get_status::BadKey;
    return;
  }
  const uint32_t sec = server_sec(now);
  const uint64_t h = hash_of(key);
  item* spare = nullptr;  // allocated outside the lock for vivify / lease placeholders
  bool counted_expiry = false;
  unsigned hit_class = 0;  // the class of the item hit, for the per-class counts

  for (;;) {
    size_t need_capacity = 0;
    bool need_spare = false;
    {
      reclaim_list rl(home_);
      bucket_guard guard(table_.lock_of(h));
      bool hidden;  // past its deadline here, kept for the master's word
      item* it = find_readable(h, key, sec, count, counted_expiry, rl, hidden);
      if (hidden) {
        // A miss; nothing is created over the kept item (a slave takes no writes).
      } else if (it && !it->is_placeholder()) {
        need_capacity = read_hit(it, now, sec, opts, res);
        hit_class = it->slab_class_;
      } else if (opts.lease) {
        need_spare = !lease_miss(it, h, spare, now, sec, res);
      } else if (opts.vivify && !it) {
        need_spare = !vivify_miss(h, spare, now, sec, opts, res);
      }
    }
    if (need_capacity) {
      res.value.reserve(need_capacity);
      continue;
    }
    if (need_spare) {
      spare = alloc_charged(key, opts.lease ? sizeof(uint64_t) : 0);
      if (spare) continue;
      // Out of memory for a placeholder: a plain miss.
    }
    break;
  }
  if (spare) {
    reclaim_list rl(home_);
    rl.add(spare);
  }
  if (count) count_read(opts, res, hit_class);
}

}  // namespace ithaca::store
