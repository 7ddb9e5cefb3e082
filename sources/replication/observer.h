// The store's change observer on a master: serializes every change into the
// hand-off ring (mm::byte_queue) as a replication record, under the key's
// bucket lock, so each key's records are in the order the master applied them.
// Also the initial-sync scan's writer (sync_item), which holds the bucket lock
// the same way, so scan and stream records of a key are ordered too.
//
// Threads: on_* run on any worker (and the cron, the scan) under a bucket
// lock: they never block, allocate or lock (byte_queue's producer side). The
// router machine flips `streaming` and reads the counters.
//
// Policy when the ring is full: the record is not written, `lost` counts it,
// and the router drops every slave (a stream with a hole cannot be repaired;
// each slave must resync). Workers never wait.
#pragma once

#include <atomic>
#include <cstdint>

#include "machinarium.h"
#include "ring_record.h"
#include "store_types.h"

namespace ithaca::replication {

class stream_observer final : public store::change_observer {
public:
    stream_observer(mm::byte_queue& queue, int64_t wall_base) : queue_(queue), wall_base_(wall_base) {}

    void on_store(const store::item_view& item) noexcept override;
    void on_remove(std::string_view key, store::remove_reason why) noexcept override;
    void on_touch(const store::item_view& item) noexcept override;

    // The initial sync of slave `sync_id`: one item (under its bucket lock), then
    // the end marker. False if the ring refused (nothing was written).
    bool sync_item(const store::item_view& item, uint32_t sync_id) noexcept;
    bool sync_done(uint32_t sync_id) noexcept;

    // Set by the router machine: records are made only while a slave is attached.
    // Read under the bucket lock, so a scan that starts after setting it sees
    // every later change of a bucket it has copied (see INTERNALS.md).
    void set_streaming(bool on) noexcept { streaming_.store(on, std::memory_order_seq_cst); }
    bool streaming() const noexcept { return streaming_.load(std::memory_order_relaxed); }

    // Records the ring refused. (Records written are not counted here: one
    // counter shared by every worker would be a contended write per change;
    // the router counts what it hands to slaves.)
    uint64_t lost() const noexcept { return lost_.load(std::memory_order_relaxed); }

private:
    bool put_set(const store::item_view& item, ring_kind kind, uint32_t sync_id) noexcept;
    void counted(bool ok) noexcept;

    mm::byte_queue& queue_;
    const int64_t wall_base_;
    std::atomic<bool> streaming_{false};
    std::atomic<uint64_t> lost_{0};
};

}  // namespace ithaca::replication
