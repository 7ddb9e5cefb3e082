#include "ack_waiters.h"

#include <unistd.h>

#include <algorithm>

#include <spdlog/spdlog.h>

#include "reply.h"

namespace ithaca::route {

void reply_unconfirmed(request_slot& slot) {
  protocol::out_buffer& out = slot.deferred;
  out.consume(out.size());
  const protocol::request& req = slot.req;
  switch (req.proto) {
    case protocol::protocol_kind::Binary:
      protocol::encode_binary(out, req.opcode, req.opaque, protocol::binary_status::TemporaryFailure, 0, {}, {},
                              kUnconfirmed.substr(std::string_view("SERVER_ERROR ").size()));
      return;
    case protocol::protocol_kind::Ascii:
      if (req.noreply) return;
      break;
    case protocol::protocol_kind::Meta: break;  // q hides successes only
  }
  protocol::encode_ascii_line(out, kUnconfirmed);
}

ack_waiters::ack_waiters(replication::ack_state& state, unsigned worker) : state_(state), wake_(state.wake(worker)) {}

ack_waiters::~ack_waiters() = default;

bool ack_waiters::park(request_slot& slot, std::uint64_t position, std::int64_t deadline_ns) {
  if (!running_) return false;
  const bool earlier = !parked_.empty() && deadline_ns < parked_.back().deadline_ns;
  parked_.push_back(entry{&slot, position, deadline_ns, mm::now_ns()});
  if (earlier) {
    // The coroutine may sleep until a later deadline: wake it through its own
    // eventfd (as a confirmation would) so it sleeps until this one instead.
    unordered_deadlines_ = true;
    const std::uint64_t one = 1;
    ssize_t n = ::write(wake_.event_fd, &one, sizeof one);  // never blocks: the coroutine drains it
    (void)n;
  }
  state_.counters().ack_waits.fetch_add(1, std::memory_order_relaxed);
  if (parked_.size() == 1) idle_.wake();
  return true;
}

void ack_waiters::release(const entry& e, bool confirmed, std::int64_t now) {
  replication::repl_counters& c = state_.counters();
  if (confirmed) {
    const auto us = static_cast<std::uint64_t>(std::max<std::int64_t>(0, now - e.parked_ns) / 1000);
    c.ack_confirmed.fetch_add(1, std::memory_order_relaxed);
    c.ack_latency_us.fetch_add(us, std::memory_order_relaxed);
    std::uint64_t max = c.ack_latency_max_us.load(std::memory_order_relaxed);
    while (us > max && !c.ack_latency_max_us.compare_exchange_weak(max, us, std::memory_order_relaxed)) {}
  } else {
    c.ack_timeouts.fetch_add(1, std::memory_order_relaxed);
    // An orphaned slot's request points into a freed buffer: nobody reads its reply.
    if (!e.slot->orphaned()) reply_unconfirmed(*e.slot);
  }
  state_.waiting.fetch_sub(1, std::memory_order_relaxed);
  e.slot->call_done();  // Ready (the client is woken), or freed if orphaned
}

std::int64_t ack_waiters::release_expired(std::int64_t now) {
  if (!unordered_deadlines_) {
    while (!parked_.empty() && parked_.front().deadline_ns <= now) {
      release(parked_.front(), false, now);
      parked_.pop_front();
    }
    return parked_.empty() ? 0 : parked_.front().deadline_ns;
  }
  // Rare (an ack_timeout shortened by a reload while writes waited): a scan,
  // bounded by the worker's parked writes, until the FIFO empties again.
  std::int64_t earliest = 0;
  auto keep = parked_.begin();
  for (auto it = parked_.begin(); it != parked_.end(); ++it) {
    if (it->deadline_ns <= now) {
      release(*it, false, now);
      continue;
    }
    if (earliest == 0 || it->deadline_ns < earliest) earliest = it->deadline_ns;
    *keep++ = *it;
  }
  parked_.erase(keep, parked_.end());
  if (parked_.empty()) unordered_deadlines_ = false;
  return earliest;
}

mm::wait_status ack_waiters::sleep_for_head(std::int64_t deadline_ns) {
  const entry& head = parked_.front();
  wake_.wanted.store(head.position, std::memory_order_relaxed);
  wake_.sleeping.store(true, std::memory_order_seq_cst);
  if (state_.confirmed() >= head.position) {  // confirmed before the fan-out machine could see us sleep
    wake_.sleeping.store(false, std::memory_order_relaxed);
    return mm::wait_status::Ok;
  }
  mm::wait_status w = event_->wait_readable(mm::millis_until(deadline_ns));
  std::uint64_t count;
  ssize_t n = ::read(event_->fd(), &count, sizeof count);  // drain; EAGAIN if nobody wrote
  (void)n;
  wake_.sleeping.store(false, std::memory_order_relaxed);
  return w;
}

void ack_waiters::run() {
  const int fd = ::dup(wake_.event_fd);
  if (fd >= 0) event_ = mm::io::attach(fd);
  if (!event_) {
    if (fd >= 0) ::close(fd);
    spdlog::error("replication ack: cannot attach the worker's eventfd; writes get '{}' at once", kUnconfirmed);
    return;
  }
  running_ = true;
  for (;;) {
    const std::int64_t now = mm::now_ns();
    const std::uint64_t confirmed = state_.confirmed();
    while (!parked_.empty() && parked_.front().position <= confirmed) {
      release(parked_.front(), true, now);
      parked_.pop_front();
    }
    if (parked_.empty()) unordered_deadlines_ = false;
    const std::int64_t earliest = release_expired(now);
    const mm::wait_status w = parked_.empty() ? idle_.wait(mm::kForever) : sleep_for_head(earliest);
    if (w == mm::wait_status::Cancelled) break;
  }
  // The worker stops: no slave will be asked for these any more.
  running_ = false;
  const std::int64_t now = mm::now_ns();
  const std::uint64_t confirmed = state_.confirmed();
  for (const entry& e : parked_) release(e, e.position <= confirmed, now);
  parked_.clear();
  event_.reset();  // closed on the machine that owns it
}

}  // namespace ithaca::route
