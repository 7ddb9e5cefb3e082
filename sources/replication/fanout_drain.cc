// The fan-out machine's drain: the hand-off ring's only consumer. It copies
// each stream record once into the stream log every slave sends from, and
// each initial-sync record into its slave's outbox, in ring order; it never
// waits on a slave's socket. [fan-out machine: the "repl drain" coroutine;
// no lock; discard_stale also runs on the main coroutine when no drain does]
#include <algorithm>
#include <memory>
#include <string>

#include <spdlog/spdlog.h>

#include "fanout.h"
#include "fanout_slave.h"
#include "large_value.h"
#include "record.h"
#include "ring_record.h"

namespace ithaca::replication {

namespace {
constexpr mm::millis kIdleWait = 1000;  // the drain's wait (then it looks again)
constexpr mm::millis kLinger = 1;       // the drain's poll period while records keep coming
constexpr size_t kMaxStep = 64 << 10;   // ring bytes moved between two looks at the slaves
constexpr size_t kMaxWrite = 1 << 20;   // bytes per slave write
}  // namespace

// A step is small next to send_buffer, so the check after it drops a slave
// little past its bound, and the writers run between steps: a slave that
// keeps up never holds more than about one step unsent because of the drain.
size_t fanout::step_bytes() const {
  return static_cast<size_t>(std::clamp<uint64_t>(settings_.send_buffer / 8, 4 << 10, kMaxStep));
}

// A write's bytes count in the slave's backlog until the write ends, so a
// write is at most a quarter of send_buffer.
size_t fanout::write_bytes() const {
  return static_cast<size_t>(std::clamp<uint64_t>(settings_.send_buffer / 4, 16 << 10, kMaxWrite));
}

// Between two terms of a master (roles by virtual IP) nobody drains the ring;
// what is left in it (records of workers that read `streaming` just before
// the last slave was dropped) is discarded at the end of a term and again at
// the start of the next, before any slave can join: a new slave must not
// apply stale records after its scan. With no slave attached, deliver() only
// releases a large value's reference.
void fanout::discard_stale() {
  std::string_view record;
  while (queue_.try_peek(record)) {
    deliver(record);
    queue_.pop();
  }
  targets_.clear();
  log_.trim(log_.end());
}

// Waits for records (or, paced, for room at the fastest slave), then moves
// them in steps. A record that names a large value holds one reference on it,
// released here whether or not a slave takes it.
void fanout::drain() {
  mm::byte_queue::reader reader(queue_);
  uint64_t lost_seen = observer_.lost();
  paced_ = false;  // a new term (roles by virtual IP) has no slave yet
  for (;;) {
    // Paced: records wait in the ring (the ring has room for them; workers
    // never wait) until a writer of the fastest slave makes progress.
    const mm::wait_status w = paced_ ? room_.wait(kIdleWait) : reader.wait(kIdleWait);
    if (w == mm::wait_status::Cancelled) return;
    if (uint64_t lost = observer_.lost(); lost != lost_seen) {
      counters_.queue_overflows.fetch_add(lost - lost_seen, std::memory_order_relaxed);
      lost_seen = lost;
      for (const slave_ptr& s : std::vector<slave_ptr>(slaves_))
        drop(s, "the replication queue overflowed (" + std::to_string(lost) + " records lost so far)");
    }
    const size_t moved = drain_steps();
    if (mm::coroutine_cancelled()) return;
    // Linger while records keep coming. Waiting on the eventfd at once would
    // have the next commit wake this thread for the few records written
    // since: a thread switch, a write and a slave read per handful of
    // changes, on the workers' cores (measured: the fan-out thread cost more
    // than a third of the worker's time per set). Sleeping a tick instead
    // ships a tick's records in one write per slave; an empty ring still goes
    // back to the eventfd wait, so a lone change leaves at once.
    // Not while a client write waits for a confirmation (ack: slave): its
    // record and the request to confirm it go now.
    const bool acks_waiting = ack_ && ack_->waiting.load(std::memory_order_relaxed) > 0;
    if (moved > 0 && !paced_ && !slaves_.empty() && !acks_waiting && mm::sleep(kLinger) == mm::wait_status::Cancelled)
      return;
  }
}

// Moves records out of the ring, step_bytes() at a time, until the ring is
// empty or the fastest slave is pace_limit() behind (then paced_). After each
// step: publish() (wake the writers, drop who passed send_buffer), then a
// yield, so the writers send the step before the next one. Returns the ring
// bytes moved. Its work per record does not depend on the number of slaves.
size_t fanout::drain_steps() {
  size_t moved = 0;
  for (;;) {
    paced_ = !slaves_.empty() && fastest_backlog() >= pace_limit();
    if (paced_) break;
    size_t step = 0;
    std::string_view record;
    while (step < step_bytes() && queue_.try_peek(record)) {
      deliver(record);
      queue_.pop();
      step += record.size();
      if (mm::coroutine_cancelled()) return moved + step;  // a large value's read was cancelled
    }
    targets_.clear();  // no dropped slave kept open by it
    if (step == 0) break;
    moved += step;
    publish();
    mm::yield();
    if (mm::coroutine_cancelled()) return moved;
  }
  publish();
  return moved;
}

// One ring record to where it goes: a stream record into the log (once, for
// every slave; nowhere without a slave), a sync record into its slave's
// outbox at the log's end (so it sits between the same stream records as in
// the ring), SyncDone ends that slave's sync. A value kept in a file is read
// here, off every lock, before its record goes anywhere. [drain; may suspend
// on the blocking pool, which holds the records behind it in order]
void fanout::deliver(std::string_view record) {
  const ring_tag tag = read_tag(record);
  const std::string_view packet = packet_of(record);
  store::large_value_ref large(tag.large ? tag.value : nullptr);  // adopts the record's reference
  std::vector<slave_ptr>& targets = targets_;                     // a copy of the list: a failed read drops
  targets.clear();
  switch (tag.kind) {
    case ring_kind::Stream:
      // One copy, whatever the number of slaves; none without a slave.
      if (slaves_.empty()) return;
      counters_.records_sent.fetch_add(slaves_.size(), std::memory_order_relaxed);
      if (!large) {
        log_.append(packet);
        return;
      }
      for (const slave_ptr& s : slaves_) targets.push_back(s);
      break;
    case ring_kind::Sync:
      for (const slave_ptr& s : slaves_) {
        if (s->id == tag.sync_id) {
          targets.push_back(s);
          s->synced++;
        }
      }
      counters_.sync_items.fetch_add(targets.size(), std::memory_order_relaxed);
      if (targets.empty()) return;
      if (!large) {
        for (const slave_ptr& s : targets) s->out.add_own(log_.end(), packet);
        return;
      }
      break;
    case ring_kind::SyncDone:
      for (const slave_ptr& s : slaves_) {
        if (s->id != tag.sync_id) continue;
        s->syncing = false;
        if (s->takeover) s->takeover->synced.store(true);
        counters_.syncs_done.fetch_add(1, std::memory_order_relaxed);
        spdlog::info("replication: initial sync of slave {} done: {} items in {} ms", s->peer, s->synced,
                     (mm::now_ns() - s->joined_ns) / 1000000);
      }
      return;
    case ring_kind::Handover:
      // The takeover's end: an ack request no position reaches, after every
      // record the ring held before it (server/takeover_server.h).
      for (const slave_ptr& s : slaves_) {
        if (s->id != tag.sync_id) continue;
        char mark[kAckSize];
        encode_ack_request(mark, kHandoverPosition);
        s->out.add_own(log_.end(), {mark, sizeof mark});
        s->asked = kHandoverPosition;
        s->ready.signal();
      }
      return;
  }
  // A value in a file: read it off every lock, on the blocking pool (the
  // drain waits for it, which keeps the records in order).
  auto value = std::make_shared<std::string>();
  auto ok = std::make_shared<bool>(false);
  store::large_value_ref ref = large;
  if (mm::blocking_call([ref, value, ok] { *ok = ref.read_all(*value); }, 60000) != mm::wait_status::Ok || !*ok) {
    for (const slave_ptr& s : targets) drop(s, "could not read a large value to replicate");
    return;
  }
  if (tag.kind == ring_kind::Stream) {
    if (slaves_.empty()) return;  // all dropped meanwhile
    log_.append(packet);
    log_.append(*value);
    return;
  }
  for (const slave_ptr& s : targets) {
    if (!s->closed) s->out.add_own(log_.end(), packet, *value);
  }
}

// After a step: asks for confirmations (ack: slave); drops each slave over
// send_buffer that was already pace_limit() behind at the previous look (so
// one record larger than its room does not drop a slave that keeps up: it
// gets until the next look); wakes the others' writers; frees the log the
// slowest slave has sent; updates repl_lag_bytes. O(slaves).
void fanout::publish() {
  ask_confirmations();
  const uint64_t end = log_.end();
  for (size_t i = 0; i < slaves_.size();) {
    slave_ptr s = slaves_[i];
    const uint64_t backlog = s->out.backlog(end);
    if (backlog > settings_.send_buffer && s->checked_backlog >= pace_limit()) {
      drop(s, "fell behind by more than send_buffer (" + std::to_string(settings_.send_buffer) + " bytes)");
      continue;  // the next slave took index i
    }
    s->checked_backlog = backlog;
    if (backlog > 0) s->ready.signal();
    ++i;
  }
  uint64_t oldest = end;
  for (const slave_ptr& s : slaves_) oldest = std::min(oldest, s->out.position());
  log_.trim(oldest);
  update_lag();
}

// The backlog of the slave furthest ahead: the drain's pace.
uint64_t fanout::fastest_backlog() const {
  const uint64_t end = log_.end();
  uint64_t least = UINT64_MAX;
  for (const slave_ptr& s : slaves_) least = std::min(least, s->out.backlog(end));
  return least;
}

// While client writes wait for a confirmation (ack: slave), asks every
// synced slave to confirm the position the drain has reached: every record
// before it is in the log ahead of the request, which goes in the slave's
// outbox at the log's end.
void fanout::ask_confirmations() {
  if (!ack_ || ack_->waiting.load(std::memory_order_seq_cst) == 0) return;
  const uint64_t position = observer_.read_position();
  char request[kAckSize];
  encode_ack_request(request, position);
  for (const slave_ptr& s : slaves_) {
    if (s->syncing || s->asked >= position) continue;
    s->out.add_own(log_.end(), {request, sizeof request});
    s->asked = position;
    counters_.ack_requests.fetch_add(1, std::memory_order_relaxed);
  }
}

void fanout::update_lag() {
  uint64_t lag = 0;
  const uint64_t end = log_.end();
  for (const slave_ptr& s : slaves_) lag += s->out.backlog(end);
  counters_.lag_bytes.store(lag, std::memory_order_relaxed);
}

}  // namespace ithaca::replication
