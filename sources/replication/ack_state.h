// The semi-synchronous acknowledgement (`replication.ack: slave`), the part
// the fan-out machine and the workers share. A client's write on a master gets
// its reply only once a slave confirmed a stream position at or past the
// write's own (observer.h's change_mark gives it):
//
//   worker: `waiting` + 1, the store call (its record enters the ring at
//           position p), a waiter (route/ack_waiters.h) parks the slot
//   fan-out (the replication machine, fanout.h): drains the ring; after a
//           batch, while `waiting` > 0, asks every synced slave to confirm
//           the position reached (record.h's Noop)
//   slave:  applies everything before the request, answers with the position
//   fan-out: confirm(p): raises `confirmed`, wakes the workers whose oldest
//           waiting write it covers (an eventfd each, coalesced)
//
// No lock anywhere: `waiting` is raised before the store call, so the drain
// that pops the write's record (acquire) sees it and asks; `confirmed` and a
// worker's `sleeping` are a Dekker pair (seq_cst), so a confirmation is never
// missed by a worker going to sleep; a worker is woken at most once per sleep.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "repl_counters.h"

namespace ithaca::replication {

class ack_state {
 public:
  // One wake handle per worker. [any thread]
  ack_state(unsigned workers, repl_counters& counters);
  ~ack_state();
  ack_state(const ack_state&) = delete;
  ack_state& operator=(const ack_state&) = delete;

  // The highest stream position a slave confirmed. [any thread]
  uint64_t confirmed() const noexcept { return confirmed_.load(std::memory_order_seq_cst); }
  // Raises it and wakes each worker whose oldest waiting write is now
  // covered (an eventfd write, no lock). [fan-out machine]
  void confirm(uint64_t position) noexcept;

  // Writes between their store call and their reply (every worker). The
  // fan-out machine asks for confirmations only while it is not 0. [any thread]
  std::atomic<uint64_t> waiting{0};

  // A worker's wake: its ack coroutine stores the position of its oldest
  // waiting write in `wanted`, then sets `sleeping`, then reads confirmed()
  // once more before waiting on the eventfd.
  struct worker_wake {
    alignas(64) std::atomic<uint64_t> wanted{0};
    std::atomic<bool> sleeping{false};
    int event_fd = -1;  // owned here; each worker attaches a dup to its machine
  };
  worker_wake& wake(unsigned worker) noexcept { return wakes_[worker]; }
  unsigned workers() const noexcept { return workers_; }
  // Eventfd writes made (coalescing shows here: at most one per sleep).
  uint64_t wakeups() const noexcept { return wakeups_.load(std::memory_order_relaxed); }

  repl_counters& counters() noexcept { return counters_; }

 private:
  unsigned workers_;
  std::unique_ptr<worker_wake[]> wakes_;
  repl_counters& counters_;
  std::atomic<uint64_t> confirmed_{0};
  std::atomic<uint64_t> wakeups_{0};
};

}  // namespace ithaca::replication
