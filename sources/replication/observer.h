// The store's change observer on a master: serializes every change into the
// hand-off ring (mm::byte_queue) as a replication record, under the key's
// bucket lock, so each key's records are in the order the master applied them.
// Also the initial-sync scan's writer (sync_item), which holds the bucket lock
// the same way, so scan and stream records of a key are ordered too.
//
// Threads: on_* run on any worker (and the cron, the scan) under a bucket
// lock: they never block, allocate or lock (byte_queue's producer side). The
// fan-out machine flips `streaming` and reads the counters.
//
// Policy when the ring is full: the record is not written, `lost` counts it,
// and the fan-out machine drops every slave (a stream with a hole cannot be repaired;
// each slave must resync). Workers never wait.
#pragma once

#include <atomic>
#include <cstdint>

#include "machinarium.h"
#include "ring_record.h"
#include "store_types.h"

namespace ithaca::replication {

// What the store calls of the current thread changed: the semi-synchronous
// ack (route/routes/ack_route.cc) copies it before a client's write and
// compares after, to learn whether the write changed the store and at which
// stream position its record ends. Only counters that grow, so a coroutine
// that suspends inside a store call (a large value's file read) and lets
// another coroutine of the thread write meanwhile sees that write counted as
// its own: it then waits for a later position (safe), never an earlier one.
// Written by the observer under the bucket lock, read by the same thread
// after the store call returned: a plain thread-local, no atomics.
struct change_mark {
  uint64_t position = 0;  // the stream position just past this thread's latest record
  uint64_t changes = 0;   // items changed (streamed or not)
  uint64_t streamed = 0;  // stream records handed to the ring
  uint64_t lost = 0;      // records the full ring refused: they reach no slave
};
change_mark& thread_change_mark() noexcept;

class stream_observer final : public store::change_observer {
 public:
  // `position_base` is added to the ring's positions (mm::byte_queue's
  // `end`) to make the stream positions the workers and slaves see.
  stream_observer(mm::byte_queue& queue, int64_t wall_base, uint64_t position_base = 0)
      : queue_(queue), wall_base_(wall_base), position_base_(position_base) {}

  // The stream position every record popped so far ends at. [the ring's consumer]
  uint64_t read_position() const noexcept { return position_base_ + queue_.read_position(); }

  void on_store(const store::item_view& item) noexcept override;
  void on_remove(std::string_view key, store::remove_reason why) noexcept override;
  void on_touch(const store::item_view& item) noexcept override;

  // The initial sync of slave `sync_id`: one item (under its bucket lock), then
  // the end marker. False if the ring refused (nothing was written).
  bool sync_item(const store::item_view& item, uint32_t sync_id) noexcept;
  bool sync_done(uint32_t sync_id) noexcept;
  // Takeover (server/takeover_server.h): every record already in the ring
  // goes to slave `sync_id` before the end mark that follows them. [any
  // thread, once the workers have stopped] False if the ring refused.
  bool handover_mark(uint32_t sync_id) noexcept;

  // Set by the fan-out machine: records are made only while a slave is attached.
  // Read under the bucket lock, so a scan that starts after setting it sees
  // every later change of a bucket it has copied (see INTERNALS.md).
  void set_streaming(bool on) noexcept { streaming_.store(on, std::memory_order_seq_cst); }
  bool streaming() const noexcept { return streaming_.load(std::memory_order_relaxed); }

  // Records the ring refused. (Records written are not counted here: one
  // counter shared by every worker would be a contended write per change;
  // the fan-out machine counts what it hands to slaves.)
  uint64_t lost() const noexcept { return lost_.load(std::memory_order_relaxed); }

 private:
  bool put_set(const store::item_view& item, ring_kind kind, uint32_t sync_id) noexcept;
  void counted(bool ok) noexcept;
  void commit_stream(const mm::byte_queue::reservation& r) noexcept;

  mm::byte_queue& queue_;
  const int64_t wall_base_;
  const uint64_t position_base_;
  std::atomic<bool> streaming_{false};
  std::atomic<uint64_t> lost_{0};
};

}  // namespace ithaca::replication
