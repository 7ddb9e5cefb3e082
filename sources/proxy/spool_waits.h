// One worker's failed deletes waiting for the spool machine to write their
// records (delete_spool.h), and the coroutine that hands the answers back:
// "spool waits", one per worker machine.
//
// A pool route with reliable_deletes whose delete got no reply parks its
// slot here (park(): the record goes to the spool machine, the slot takes
// one more call, the route answers Pending), so the client's in-order queue
// holds that reply, and every reply behind it, until this worker's coroutine
// calls call_done(): when the machine answers that the record is in its file
// (the slot's outcome becomes NotFound, mcrouter's answer to a spooled
// delete), that it could not write it (the outcome stays the failure), or at
// the slot's deadline (the failure; the machine then does not write the
// record, counting it dropped, unless it was already writing it: see
// INTERNALS.md "Reliable deletes"), or when the worker stops (the failure).
//
// Why a coroutine of the worker: a slot is not thread-safe, so only its own
// worker may complete it; the spool machine only posts to this worker's
// mailbox and wakes this coroutine (spool_mailbox), never touches a slot.
//
// Bound: kMaxUnanswered records of this worker the machine has not answered
// (parked, or given up at their deadline and not answered yet); past it a
// failed delete is not handed over: it gets the failure at once, counted
// dropped. The mailbox never holds more than that.
//
// Thread: the worker machine only (park from a route's resume, run as its
// coroutine); the mailbox's lock is the only thing shared (a leaf, never
// held across a wait).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "delete_spool.h"
#include "request_slot.h"

namespace ithaca::proxy {

class spool_waits {
 public:
  static constexpr std::size_t kMaxUnanswered = 4096;

  spool_waits();
  ~spool_waits();
  spool_waits(const spool_waits&) = delete;
  spool_waits& operator=(const spool_waits&) = delete;

  // Hands the delete of `key` for `server` to `spool` and parks `slot`
  // (slot.add_call(): the caller answers Pending) until the machine's answer
  // or `deadline_ns` (mm::deadline_after's clock). False when it cannot be
  // handed over (the coroutine is not running, kMaxUnanswered, or the spool
  // refused it: bound, queue, key): counted dropped, the slot untouched.
  // [this worker; never waits]
  bool park(flow::request_slot& slot, delete_spool& spool, const std::shared_ptr<backend_server>& server,
            std::string_view key, int64_t deadline_ns);

  // The coroutine "spool waits": until cancelled (the worker stops), then
  // completes every parked slot (written ones as spooled, the rest with the
  // failure).
  void run();

 private:
  struct entry {
    flow::request_slot* slot;
    int64_t deadline_ns;
  };
  // Completes the slot of record `seq`, if it still waits (not given up).
  void release(uint64_t seq, bool written);
  // Takes the machine's answers posted so far.
  void take_answers();
  // Gives up on every slot past its deadline.
  void release_expired(int64_t now);
  // Wakes the coroutine (same machine) so it sleeps until an earlier deadline.
  void nudge();

  std::shared_ptr<spool_mailbox> mailbox_;
  std::map<uint64_t, entry> parked_;                  // by record number
  std::set<std::pair<int64_t, uint64_t>> deadlines_;  // (deadline, record) of the parked
  std::vector<spool_mailbox::outcome> answers_;       // scratch, kept with its capacity
  uint64_t next_seq_ = 1;
  std::size_t unanswered_ = 0;  // handed over, not answered yet
  bool running_ = false;
};

}  // namespace ithaca::proxy
