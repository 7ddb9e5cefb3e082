#include "spool_waits.h"

#include <limits>

#include "routed_result.h"

namespace ithaca::proxy {

spool_waits::spool_waits() : mailbox_(std::make_shared<spool_mailbox>()) {}

spool_waits::~spool_waits() = default;

bool spool_waits::park(flow::request_slot& slot, delete_spool& spool, const std::shared_ptr<backend_server>& server,
                       std::string_view key, int64_t deadline_ns) {
  if (!running_ || unanswered_ >= kMaxUnanswered) {
    count_spool_drop(*server);
    return false;
  }
  const uint64_t seq = next_seq_++;
  if (!spool.submit(server, key, mailbox_, seq, deadline_ns)) return false;  // counted
  ++unanswered_;
  slot.add_call();
  if (deadline_ns < 0) deadline_ns = std::numeric_limits<int64_t>::max();  // a caller's "forever", spelled out
  parked_.emplace(seq, entry{&slot, deadline_ns});
  deadlines_.emplace(deadline_ns, seq);
  // The coroutine sleeps until the earliest deadline it knew (or for ever):
  // this one is earlier, so it must look again.
  if (deadlines_.begin()->second == seq) nudge();
  return true;
}

void spool_waits::nudge() {
  std::lock_guard lock(mailbox_->mu);
  if (mailbox_->waiter) {
    mailbox_->waiter->wake();  // same machine: a direct wake, no message
    mailbox_->waiter.reset();
  }
}

void spool_waits::release(uint64_t seq, bool written) {
  auto it = parked_.find(seq);
  if (it == parked_.end()) return;  // given up at its deadline: its client has the failure
  flow::request_slot& slot = *it->second.slot;
  deadlines_.erase({it->second.deadline_ns, seq});
  parked_.erase(it);
  // An orphaned slot (its client gone) may still have its result written:
  // nobody reads it, and call_done() frees it.
  if (written) slot.result.outcome = protocol::routed_outcome::NotFound;  // mcrouter's answer to a spooled delete
  slot.call_done();  // back to its home: the pool route's resume() counts and answers
}

void spool_waits::take_answers() {
  {
    std::lock_guard lock(mailbox_->mu);
    answers_.swap(mailbox_->done);
  }
  for (const spool_mailbox::outcome& o : answers_) {
    --unanswered_;
    release(o.seq, o.written);
  }
  answers_.clear();
}

void spool_waits::release_expired(int64_t now) {
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) release(deadlines_.begin()->second, false);
}

void spool_waits::run() {
  running_ = true;
  for (;;) {
    take_answers();
    release_expired(mm::deadline_after(0));
    // Registered under the mailbox's lock, so an answer posted from now on
    // wakes this wait; one posted before it is seen here and taken first.
    mm::remote_waiter w;  // binds to this coroutine's next wait
    {
      std::lock_guard lock(mailbox_->mu);
      if (!mailbox_->done.empty()) continue;
      mailbox_->waiter = w;
    }
    constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
    const int64_t until = deadlines_.empty() || deadlines_.begin()->first == kNever ? -1 : deadlines_.begin()->first;
    const mm::wait_status st = w.wait_until(until);
    {
      // Off the mailbox before this coroutine may end: the spool machine
      // never posts a wake to a machine that has stopped.
      std::lock_guard lock(mailbox_->mu);
      mailbox_->waiter.reset();
    }
    if (st == mm::wait_status::Cancelled) break;
  }
  // The worker stops: what was written is answered as spooled, the rest
  // gets the failure (the machine may still write those: a delete replayed
  // for nothing is harmless).
  running_ = false;
  take_answers();
  while (!parked_.empty()) release(parked_.begin()->first, false);
}

}  // namespace ithaca::proxy
