// store: memcached's -e FILE, the store's side (memory_file.h has the file's): the walk that
// serves a graceful stop's items again, and the save that makes it possible.
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <vector>

#include "store.h"
#include "store_inline.h"

namespace ithaca::store {

namespace {

// A stamp in the stopped process's server seconds (deadline, access, store time), moved to
// this one's through unix time. kNever and kExpiredNow keep their meaning; a time before
// this process's server time 0 becomes its first second.
uint32_t memory_file_stamp(uint32_t t, int64_t old_wall_base, int64_t new_wall_base) noexcept {
  if (t == kNever || t == kExpiredNow) return t;
  const int64_t mine = deadline_to_unix(t, old_wall_base) - new_wall_base + kTimeBase;
  if (mine < int64_t{kTimeBase}) return kTimeBase;
  return mine > int64_t{std::numeric_limits<uint32_t>::max()} ? std::numeric_limits<uint32_t>::max()
                                                              : static_cast<uint32_t>(mine);
}

}  // namespace

store::memory_file_result store::restore_memory_file(const store_now& now) {
  memory_file_result r;
  if (mf_.path.empty()) return r;
  r.used = true;
  if (!mf_.restorable) {
    r.why = mf_.why;
    return r;
  }
  const memory_file_meta& m = mf_.meta;
  if (memory_file_checksum(region_.base(), m.top) != m.checksum) {
    r.why = "its checksum does not match what the stop wrote (changed since)";
    return r;
  }
  std::vector<uint64_t> used;
  if (!region_.adopt(m.top, used)) {
    r.why = "its blocks' tags do not agree";
    return r;
  }
  // The flush state first: invalid() judges each item by it.
  oldest_cas_.store(m.oldest_cas, std::memory_order_relaxed);
  if (m.oldest_live_unix != 0) {
    const int64_t ol = m.oldest_live_unix - now.wall_base + kTimeBase;
    oldest_live_.store(static_cast<uint32_t>(std::clamp<int64_t>(ol, kTimeBase, std::numeric_limits<uint32_t>::max())),
                       std::memory_order_relaxed);
  }
  const uint32_t sec = server_sec(now);
  uint64_t max_cas = m.cas_counter;
  std::vector<item*> drop;
  drop.reserve(used.size());  // no allocation under the bucket locks below
  for (const uint64_t off : used) {
    auto* it = reinterpret_cast<item*>(region_.base() + off);
    uint64_t header;
    std::memcpy(&header, region_.base() + off - 8, sizeof header);
    const uint64_t block = header & ~uint64_t{7};
    // What a stopped process wrote, checked again (the checksum covers a changed byte;
    // this covers a bug that wrote a bad item): a block that is not an item is dropped.
    const bool sane = it->block_ == block && it->key_len_ >= 1 && it->key_len_ <= kKeyMax &&
                      item_cost(it->key_len_, it->value_len_) <= block;
    if (!sane || (it->bits_ & (kLarge | kPlaceholder))) {
      drop.push_back(it);
      continue;
    }
    it->deadline_ = memory_file_stamp(it->deadline_, m.wall_base, now.wall_base);
    it->atime_ = memory_file_stamp(it->atime_, m.wall_base, now.wall_base);
    it->stime_ = memory_file_stamp(it->stime_, m.wall_base, now.wall_base);
    it->refs_ = 1;  // the chain's
    it->next_ = nullptr;
    it->bits_ &= static_cast<uint8_t>(~(kSmall | kCold));  // every item joins main
    remove_reason why;
    if (invalid(it, sec, why)) {
      drop.push_back(it);
      continue;
    }
    const uint64_t h = hash_of(it->key());
    bucket_guard guard(table_.lock_of(h));
    item** link = find_link(h, it->key());
    if (item* twin = *link) {  // one key twice: a bug's leftover; the later store wins
      if (twin->cas_ >= it->cas_) {
        drop.push_back(it);
        continue;
      }
      *link = twin->next_;
      stats_.add(store_counter::curr_items, -1);
      stats_.bytes.fetch_sub(static_cast<int64_t>(item_mem(twin)), std::memory_order_relaxed);
      class_unlink(twin);
      drop.push_back(twin);
      --r.restored;
    }
    link_first(h, it);
    stats_.add(store_counter::curr_items);
    stats_.bytes.fetch_add(static_cast<int64_t>(item_mem(it)), std::memory_order_relaxed);
    class_link(it);
    max_cas = std::max(max_cas, it->cas_);
    ++r.restored;
  }
  for (item* it : drop) region_.free(it);  // never item_free: a large one's pointer is stale
  r.dropped = drop.size();
  cas_counter_.store(std::max(cas_counter_.load(std::memory_order_relaxed), max_cas), std::memory_order_relaxed);
  return r;
}

bool store::save_memory_file(const store_now& now, std::string& why) {
  if (mf_.path.empty()) {
    why = "no memory file";
    return false;
  }
  memory_file_meta m = mf_.meta;
  m.format = kMemoryFileFormat;
  m.clean = true;
  m.region_size = mf_.size;
  m.item_size_max = cfg_.item_size_max;  // what the next start's -I is compared with
  m.cas_enabled = cfg_.cas_enabled;
  m.top = region_.top();
  m.checksum = memory_file_checksum(region_.base(), m.top);
  m.wall_base = now.wall_base;
  m.stop_unix = now.wall_base + static_cast<int64_t>(now.ms / 1000);
  m.cas_counter = cas_counter_.load(std::memory_order_relaxed);
  m.oldest_cas = oldest_cas_.load(std::memory_order_relaxed);
  const uint32_t ol = oldest_live_.load(std::memory_order_relaxed);
  m.oldest_live_unix = ol ? deadline_to_unix(ol, now.wall_base) : 0;
  if (m.top && msync(region_.base(), m.top, MS_SYNC) != 0) {
    why = std::string("msync: ") + std::strerror(errno);
    return false;
  }
  if (!memory_file_write_meta(mf_.path, m, why)) return false;
  mf_saved_ = true;
  return true;
}

}  // namespace ithaca::store
