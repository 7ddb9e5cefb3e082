#include "observer.h"

#include "large_value.h"
#include "record.h"
#include "store_time.h"

namespace ithaca::replication {

namespace {
// Claims tag + packet; nullptr (nothing claimed) if the ring refuses.
char* claim(mm::byte_queue& q, size_t packet_size, const ring_tag& tag, mm::byte_queue::reservation& r) {
  if (!q.try_reserve(sizeof(ring_tag) + packet_size, r)) return nullptr;
  std::memcpy(r.data, &tag, sizeof tag);
  return r.data + sizeof tag;
}
}  // namespace

change_mark& thread_change_mark() noexcept {
  thread_local change_mark mark;
  return mark;
}

void stream_observer::counted(bool ok) noexcept {
  if (!ok) {
    lost_.fetch_add(1, std::memory_order_relaxed);
    thread_change_mark().lost++;
  }
}

// Publishes a stream record and tells this thread where it ends.
void stream_observer::commit_stream(const mm::byte_queue::reservation& r) noexcept {
  queue_.commit(r);
  change_mark& m = thread_change_mark();
  m.position = position_base_ + r.end;
  m.streamed++;
}

bool stream_observer::put_set(const store::item_view& item, ring_kind kind, uint32_t sync_id) noexcept {
  const uint32_t exptime = wire_exptime(store::deadline_to_unix(item.deadline, wall_base_));
  ring_tag tag{kind, 0, 0, sync_id, nullptr};
  mm::byte_queue::reservation r;
  if (item.large) {
    // The value stays in its file: the fan-out machine reads it off the lock.
    tag.large = 1;
    tag.value = item.large;
    char* p = claim(queue_, set_size(item.key.size(), 0), tag, r);
    if (!p) return false;
    item.large->ref();  // lock-free; the fan-out machine drops it
    encode_set_prefix(p, item.key, item.flags, exptime, item.large->size());
  } else {
    char* p = claim(queue_, set_size(item.key.size(), item.value.size()), tag, r);
    if (!p) return false;
    encode_set(p, item.key, item.flags, exptime, item.value);
  }
  if (kind == ring_kind::Stream)
    commit_stream(r);
  else
    queue_.commit(r);
  return true;
}

void stream_observer::on_store(const store::item_view& item) noexcept {
  thread_change_mark().changes++;
  if (streaming()) counted(put_set(item, ring_kind::Stream, 0));
}

void stream_observer::on_touch(const store::item_view& item) noexcept {
  thread_change_mark().changes++;
  if (!streaming()) return;
  mm::byte_queue::reservation r;
  char* p = claim(queue_, touch_size(item.key.size()), ring_tag{}, r);
  if (p) {
    encode_touch(p, item.key, wire_exptime(store::deadline_to_unix(item.deadline, wall_base_)));
    commit_stream(r);
  }
  counted(p != nullptr);
}

// Every removal, whatever the reason (delete, expiry, eviction, flush), is a
// DeleteQ, as yrmcds's GC sends one for each object it drops.
void stream_observer::on_remove(std::string_view key, store::remove_reason) noexcept {
  thread_change_mark().changes++;
  if (!streaming()) return;
  mm::byte_queue::reservation r;
  char* p = claim(queue_, delete_size(key.size()), ring_tag{}, r);
  if (p) {
    encode_delete(p, key);
    commit_stream(r);
  }
  counted(p != nullptr);
}

bool stream_observer::sync_item(const store::item_view& item, uint32_t sync_id) noexcept {
  return put_set(item, ring_kind::Sync, sync_id);
}

bool stream_observer::sync_done(uint32_t sync_id) noexcept {
  mm::byte_queue::reservation r;
  if (!claim(queue_, 0, ring_tag{ring_kind::SyncDone, 0, 0, sync_id, nullptr}, r)) return false;
  queue_.commit(r);
  return true;
}

bool stream_observer::handover_mark(uint32_t sync_id) noexcept {
  mm::byte_queue::reservation r;
  if (!claim(queue_, 0, ring_tag{ring_kind::Handover, 0, 0, sync_id, nullptr}, r)) return false;
  queue_.commit(r);
  return true;
}

}  // namespace ithaca::replication
