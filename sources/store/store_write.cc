// store: the write path. set (set, add, replace, cas; append and prepend go to rmw.cc),
// remove (delete, md), touch and flush_all.
#include <algorithm>
#include <cstring>

#include "store.h"
#include "store_inline.h"

namespace ithaca::store {

// set's first step, before any lock: the whole item, flags set, charged to memory, its
// value copied in (or written to a large value's file extent). nullptr when out of memory
// (or the large value could not be made: counted as large_value_errors).
item* store::make_item(std::string_view key, std::span<const char> value, uint32_t flags) noexcept {
  item* it = nullptr;
  const uint64_t large_threshold = large_value_threshold_.load(std::memory_order_relaxed);
  if (large_threshold && value.size() > large_threshold) {
    large_value* lv = create_large(value);
    if (!lv) {
      stats_.add(store_counter::large_value_errors);
      return nullptr;
    }
    it = alloc_item(key, sizeof lv);
    if (it) {
      it->bits_ |= kLarge;
      std::memcpy(it->value_data(), &lv, sizeof lv);
      it->flags_ = flags;
    }
    if (!it) {
      lv->unref();
      stats_.add(store_counter::out_of_memory);
    } else if (!charge(it)) {
      item_free(it, region_);
      it = nullptr;
    } else {
      stats_.add(store_counter::large_values);
    }
  } else {
    it = alloc_charged(key, value.size(), flags);
    if (it && !value.empty()) std::memcpy(it->value_data(), value.data(), value.size());
  }
  if (it) it->flags_ = flags;
  return it;
}

// Under the key's bucket lock: whether a store of `mode` may replace `old` (the key's valid
// item or placeholder, or null; `live` the item a client sees, or null): a lease token that
// no longer matches, add over a live item, replace or cas without one, a CAS mismatch.
// `stale_store`: meta I's older writer, stored but marked stale.
inline store_status store::store_verdict(store_mode mode, const store_options& opts, const item* old, const item* live,
                                         bool& stale_store) const noexcept {
  const bool compare = mode == store_mode::Cas || (opts.compare_cas != 0 && mode != store_mode::Add);
  stale_store = false;
  if (opts.lease_token != 0 && (!old || !old->is_placeholder() || old->cas_ != opts.lease_token))
    return store_status::NotStored;  // the token was invalidated by a delete or a set since
  if (mode == store_mode::Add && live) return store_status::NotStored;
  if (mode == store_mode::Replace && !live) return store_status::NotStored;
  if (compare) {
    if (!live) return store_status::NotFound;
    if (!cfg_.cas_enabled && !opts.internal && !opts.item_cas)
      return store_status::Exists;  // memcached -C: a cas store never matches
    if (live->cas_ != opts.compare_cas) {
      if (opts.invalidate && opts.compare_cas < live->cas_)
        stale_store = true;  // meta I: an older writer stores, marked stale
      else
        return store_status::Exists;
    }
  }
  return store_status::Stored;
}

// Under the key's bucket lock: memcached counts a cas's per-class hit or bad value in the
// stored item's class (`live`), and every set that got memory (stored or not) in the new
// item's (`it`). Internal stores (replication, rmw) are not counted.
inline void store::count_store(store_mode mode, const store_options& opts, store_status status, const item* it,
                               const item* live) noexcept {
  if (opts.internal) return;
  class_stats_.add(class_of(it), class_counter::cmd_set);
  if (mode != store_mode::Cas) return;
  switch (status) {
    case store_status::Stored:
      stats_.add(store_counter::cas_hits);
      class_count(live, class_counter::cas_hits);
      break;
    case store_status::Exists:
      stats_.add(store_counter::cas_badval);
      class_count(live, class_counter::cas_badval);
      break;
    case store_status::NotFound: stats_.add(store_counter::cas_misses); break;
    default: break;
  }
}

// See store.h for the contract. The item, and a large value's file extent,
// are made before the lock (make_item); under it only the mode/CAS/lease checks
// (store_verdict), the relink and the observer's record; the replaced item is
// freed after it (reclaim_list). [any thread; one bucket lock]
void store::set(std::string_view key, store_mode mode, std::span<const char> value, uint32_t flags, int64_t exptime,
                const store_now& now, const store_options& opts, store_result& res) {
  res.cas = 0;
  res.value_size = 0;
  if (!valid_key(key)) {
    res.status = store_status::BadKey;
    return;
  }
  if (mode == store_mode::Append || mode == store_mode::Prepend) {
    set_rmw(key, mode, value, flags, now, opts, res);
    return;
  }
  if (sizeof(item) + key.size() + value.size() > item_size_max()) {
    res.status = store_status::TooLarge;
    return;
  }
  item* it = make_item(key, value, flags);
  if (!it) {
    res.status = store_status::OutOfMemory;
    return;
  }
  const uint32_t sec = server_sec(now);
  const uint32_t deadline = to_deadline(exptime, now);
  const uint64_t h = hash_of(key);
  if (set_locked(key, mode, it, h, sec, deadline, opts, res)) small_push(it, h);
}

// set's step under the key's bucket lock: checks, links `it` (or frees it after the
// unlock) and tells the observer. True if `it` joined s3fifo's small queue: the caller
// queues it after the unlock (no two locks at once).
bool store::set_locked(std::string_view key, store_mode mode, item* it, uint64_t h, uint32_t sec, uint32_t deadline,
                       const store_options& opts, store_result& res) noexcept {
  reclaim_list rl(home_);
  bucket_guard guard(table_.lock_of(h));
  item** link;
  item* old = find_valid(h, key, sec, rl, link, true);
  // An item kept past its deadline for the master (expiry_by_master) is replaced, but
  // is not live: an add may store over it.
  item* live = old && !old->is_placeholder() && !hidden_expired(old, sec) ? old : nullptr;
  bool stale_store;
  res.status = store_verdict(mode, opts, old, live, stale_store);
  count_store(mode, opts, res.status, it, live);
  if (res.status != store_status::Stored) {
    rl.add(it);
    return false;
  }
  it->cas_ = new_cas(opts.explicit_cas);
  it->deadline_ = deadline;
  if (live && (opts.keep_exptime || stale_store)) it->deadline_ = live->deadline_;
  if (live && opts.keep_flags) it->flags_ = live->flags_;
  if (stale_store) it->bits_ |= kStale | (live->bits_ & kWinSent);
  if (opts.key_binary || (live && opts.internal && (live->bits_ & kKeyBinary))) it->bits_ |= kKeyBinary;
  it->stime_ = it->atime_ = sec;
  res.cas = client_cas(it->cas_);
  res.value_size = it->data_size();
  if (!opts.in_place) stats_.add(store_counter::total_items);
  if (it->deadline_ == kExpiredNow && !expiry_by_master()) {
    // Stored and at once invisible (memcached semantics): drop the old one instead.
    // (Following a master, it is kept hidden: a Touch may revive it.)
    if (old) unlink(link, rl, remove_reason::Deleted);
    rl.add(it);
    return false;
  }
  const bool small = s3fifo_ && s3fifo_admit(it, live, h);
  if (old) {
    it->next_ = old->next_;
    *link = it;
    if (old->is_placeholder()) {
      stats_.add(store_counter::lease_placeholders, -1);
    } else {
      stats_.add(store_counter::curr_items, -1);
      class_unlink(old);
    }
    rl.add(old);
  } else {
    link_first(h, it);
  }
  stats_.add(store_counter::curr_items);
  class_link(it);
  notify_store(it);
  return small;
}

// delete / md (the contract is in store.h): one bucket lock; what is
// unlinked is freed by the reclaim list after the unlock.
remove_status store::remove(std::string_view key, const store_now& now, const remove_options& opts) {
  if (!valid_key(key)) return remove_status::BadKey;
  const uint32_t sec = server_sec(now);
  const uint64_t h = hash_of(key);
  remove_status st = remove_status::NotFound;
  // A client's CAS against the item's (memcached -C: against 0, so any but 0 differs).
  auto mismatch = [&](const item* it) {
    return opts.compare_cas != 0 && (!cfg_.cas_enabled || it->cas_ != opts.compare_cas);
  };
  // md x: the emptied item, allocated before the lock (malloc is never called under it).
  item* empty = nullptr;
  if (opts.remove_value) {
    empty = alloc_charged(key, 0);
    if (!empty) return remove_status::OutOfMemory;
  }
  {
    reclaim_list rl(home_);
    bucket_guard guard(table_.lock_of(h));
    item** link;
    item* it = find_valid(h, key, sec, rl, link);
    if (it && !it->is_placeholder() && !mismatch(it)) class_count(it, class_counter::delete_hits);
    if (it && it->is_placeholder()) {
      unlink(link, rl, remove_reason::Deleted);  // invalidates the outstanding lease
      it = nullptr;
    }
    if (!it) {
      st = remove_status::NotFound;
    } else if (mismatch(it)) {
      st = remove_status::Exists;
    } else if (opts.remove_value || opts.invalidate) {
      if (opts.remove_value) {
        // md x: the same key with an empty value takes the item's place, keeping
        // its CAS (or E's); as memcached 1.6.45, flags F and exptime T are the new
        // item's, not the old one's.
        empty->flags_ = opts.flags;
        empty->deadline_ = opts.touch ? to_deadline(opts.exptime, now) : kNever;
        empty->cas_ = opts.explicit_cas && cfg_.cas_enabled ? opts.explicit_cas : it->cas_;
        empty->stime_ = empty->atime_ = sec;
        empty->bits_ = static_cast<uint8_t>(it->bits_ & kKeyBinary);
        empty->next_ = it->next_;
        *link = empty;
        // The emptied item takes the old one's place in its class counts too
        // (it may change class: its value is gone).
        class_unlink(it);
        class_link(empty);
        rl.add(it);
        stats_.add(store_counter::total_items);
        it = empty;
        empty = nullptr;
      }
      if (opts.invalidate) {
        // md I: keep the value, serve it as stale (X) and let one reader win (W).
        it->bits_ = static_cast<uint8_t>((it->bits_ | kStale) & ~kWinSent);
        it->cas_ = new_cas(opts.explicit_cas);
        if (opts.touch) it->deadline_ = to_deadline(opts.exptime, now);
      }
      notify_store(it);
      st = remove_status::Deleted;
    } else {
      unlink(link, rl, remove_reason::Deleted);
      st = remove_status::Deleted;
    }
    if (empty) rl.add(empty);  // not used (a miss or a CAS mismatch)
  }
  if (st == remove_status::Deleted)
    stats_.add(store_counter::delete_hits);
  else if (st == remove_status::NotFound)
    stats_.add(store_counter::delete_misses);
  return st;
}

touch_status store::touch(std::string_view key, int64_t exptime, const store_now& now) {
  if (!valid_key(key)) return touch_status::BadKey;
  const uint32_t sec = server_sec(now);
  const uint64_t h = hash_of(key);
  touch_status st = touch_status::NotFound;
  {
    reclaim_list rl(home_);
    bucket_guard guard(table_.lock_of(h));
    item** link;
    item* it = find_valid(h, key, sec, rl, link);
    if (it && !it->is_placeholder()) {
      it->deadline_ = to_deadline(exptime, now);
      note_access(it);
      it->atime_ = sec;
      notify_touch(it);
      class_count(it, class_counter::touch_hits);
      st = touch_status::Touched;
    }
  }
  stats_.add(st == touch_status::Touched ? store_counter::touch_hits : store_counter::touch_misses);
  return st;
}

void store::flush_all(const store_now& now, int64_t delay) {
  if (delay <= 0) {
    // Everything stored so far has a CAS at most the counter's current value.
    oldest_cas_.store(cas_counter_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    return;
  }
  oldest_live_.store(server_sec(now) + static_cast<uint32_t>(std::min<int64_t>(delay, kMaxRelativeExptime)),
                     std::memory_order_relaxed);
}

}  // namespace ithaca::store
