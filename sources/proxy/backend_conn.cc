#include "backend_conn.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "command_class.h"
#include "pool_group_stats.h"
#include "prober.h"
#include "protocol_probe.h"
#include "worker_backends.h"

namespace ithaca::proxy {

namespace {

// A read gets at least this much room; the buffer grows for a large value.
constexpr std::size_t kReadRoom = 16 * 1024;
// An idle connection gives a read buffer above this back.
constexpr std::size_t kKeepReadBuffer = 64 * 1024;
// A write buffer that grew past this for a burst (pipelined sets of large
// values) is given back once written, so an idle connection holds no more.
constexpr std::size_t kKeepWriteBuffer = 64 * 1024;
// Finished calls kept for reuse: enough for a deep pipeline's steady state;
// a burst's extra calls (each may hold a large value's buffers) are freed.
constexpr std::size_t kKeepFreeCalls = 256;
// How long an idle coroutine sleeps before it looks at its state again (a
// close_when_idle or a stop also wakes it at once).
constexpr mm::millis kIdleWaitMs = 1000;
// A close this soon after the connect, with nothing sent, is a failed connect
// (closed_unused), not an idle timeout: memcached's shortest idle_timeout is
// 1 s and closes later than that.
constexpr int64_t kUnusedCloseMs = 500;

protocol::call_failure call_failure_of(failure_kind f) {
  switch (f) {
    case failure_kind::Down: return protocol::call_failure::Down;
    case failure_kind::QueueFull:
    case failure_kind::ShadowFull: return protocol::call_failure::QueueFull;
    case failure_kind::Timeout: return protocol::call_failure::Timeout;
    case failure_kind::BadReply: return protocol::call_failure::BadReply;
    case failure_kind::Connect:
    case failure_kind::Connection: return protocol::call_failure::ConnectionError;
  }
  return protocol::call_failure::ConnectionError;
}

}  // namespace

backend_conn::backend_conn(std::shared_ptr<backend_server> server, unsigned worker, worker_backends& owner)
    : server_(std::move(server)), worker_(worker), owner_(owner) {
  const kinds::backend_protocol p = server_->settings().protocol;
  proto_known_ = p != kinds::backend_protocol::Auto;
  // Auto speaks ascii until the probe has learned otherwise.
  proto_ = p == kinds::backend_protocol::Meta ? kinds::backend_protocol::Meta : kinds::backend_protocol::Ascii;
}

backend_conn::~backend_conn() {
  // The coroutines ended (the machine stopped or the connection closed);
  // whatever they did not finish cannot be answered any more.
  auto unanswered = [this](entry& e) {
    if (e.slot == nullptr) {  // abandoned: its client was answered, only the call is left
      delete e.call;
      return;
    }
    if (e.shadow) counters().shadow_outstanding.fetch_sub(1, std::memory_order_relaxed);
    e.slot->call_done();
    delete e.call;  // entries own their call until finish() hands it back
  };
  for (entry& e : inflight_) unanswered(e);
  for (entry& e : waiting_) unanswered(e);
}

protocol::backend_call* backend_conn::acquire_call() {
  if (free_calls_.empty()) return new protocol::backend_call();
  protocol::backend_call* c = free_calls_.back().release();
  free_calls_.pop_back();
  return c;
}

void backend_conn::submit(flow::request_slot& slot, std::span<const uint32_t> keys, int pool_group) {
  counters().requests.add();
  protocol::backend_call* call = acquire_call();
  slot.add_call();
  entry e{call, &slot, protocol::reply_shape::Line, 0, mm::now_ns(), keys};
  e.pool_group = static_cast<std::int16_t>(pool_group);
  // A connection that will send nothing more fails the request rather than
  // keep it unsent (worker_backends::conn never hands one out).
  if (!accepting()) return fail_entry(e, failure_kind::Connection);
  // Not known yet (auto, never connected): started once the probe tells.
  if (proto_known_ && !start_call(e)) return;
  if (!server_->up()) return fail_entry(e, failure_kind::Down);
  // mcrouter's pool stats: the client request's first group is the first
  // one it reached with the server up (its DestinationRoute past maySend).
  pool_group_reached(slot, pool_group);
  const server_settings& st = server_->settings();
  // A shadow's copy past the server's bound is dropped, as mcrouter drops
  // one past --target-max-shadow-requests: a slow shadow server holds at
  // most that many of this worker's copies.
  if (slot.shadow && st.max_shadow_requests > 0) {
    if (counters().shadow_outstanding.load(std::memory_order_relaxed) >= st.max_shadow_requests) {
      return fail_entry(e, failure_kind::ShadowFull);
    }
    e.shadow = true;
    counters().shadow_outstanding.fetch_add(1, std::memory_order_relaxed);
  }
  if (inflight_.size() >= st.max_inflight && waiting_.size() >= st.max_queued && drop_orphaned_reads() == 0) {
    return fail_entry(e, failure_kind::QueueFull);
  }
  e.deadline_ns = e.started_ns + static_cast<int64_t>(st.timeout_ms) * 1000000;
  if (state_ == state::Ready && waiting_.empty() && inflight_.size() < st.max_inflight) {
    encode(e);
    inflight_.push_back(e);
    writer_wake_.signal();
    reader_wake_.signal();
  } else {
    waiting_.push_back(e);
    writer_wake_.signal();
  }
  if (!coroutines_started_) start_coroutines();
}

// The server's open connections gauge and its pool-stats group's.
void backend_conn::connections_changed(int delta) {
  counters().connections.fetch_add(delta, std::memory_order_relaxed);
  if (pool_group_counters* g = pool_group_at(worker_, server_->pool_group())) {
    g->connections.fetch_add(delta, std::memory_order_relaxed);
  }
}

bool backend_conn::start_call(entry& e) {
  e.started = true;
  e.proto = proto_;
  if (e.call->start(e.slot->req, proto_, e.slot->result, e.keys) != protocol::backend_call::progress::Done) return true;
  finish(e, false);  // the codec answered (refused) without the server
  return false;
}

void backend_conn::encode(entry& e) {
  encode_step(e);
  counters().inflight.fetch_add(1, std::memory_order_relaxed);
  next_deadline_ns_ = std::min(next_deadline_ns_, e.deadline_ns);
}

void backend_conn::encode_step(entry& e) {
  if (open_line_ != nullptr && e.call->join_line(*open_line_, out_)) {
    e.shape = protocol::reply_shape::Values;
    counters().joined.add();
  } else {
    e.shape = e.call->encode(out_);
  }
  open_line_ = e.call->line_open() ? e.call : nullptr;
}

// A waiting entry of a client that is gone that only reads: not worth
// sending. Started, its call says so (backend_call::only_reads); not
// started yet, its request does (the same rule, command_class.h).
bool backend_conn::orphan_read(const entry& e) {
  return e.started ? e.call->only_reads() : protocol::can_fetch_again(e.slot->req);
}

void backend_conn::restart_waiting_deadlines(int64_t timeout_ns) {
  const int64_t from_now = mm::now_ns() + timeout_ns;
  for (entry& e : waiting_) e.deadline_ns = std::max(e.deadline_ns, from_now);
}

// Requests still waiting to be sent whose deadline has passed fail now
// (SERVER_ERROR backend timeout), as one sent would: otherwise a client
// could wait for them through connect after connect. waiting_ is in
// submission order with one timeout for all, so deadline order too.
void backend_conn::expire_waiting() {
  const int64_t now = mm::now_ns();
  while (!waiting_.empty() && waiting_.front().deadline_ns <= now) {
    entry e = waiting_.front();
    waiting_.pop_front();
    fail_entry(e, failure_kind::Timeout);
  }
}

// Takes out of waiting_ the reads whose client has gone (a reset client's
// pipelined gets): they would only keep later requests waiting, or make
// them fail with queue_full. Writes stay: the client sent them. Returns how
// many went. [only when waiting_ is full: one pass over it]
std::size_t backend_conn::drop_orphaned_reads() {
  std::size_t dropped = 0;
  std::deque<entry> kept;
  while (!waiting_.empty()) {
    entry e = waiting_.front();
    waiting_.pop_front();
    if (e.slot->orphaned() && orphan_read(e)) {
      finish(e, false);
      ++dropped;
    } else {
      kept.push_back(e);
    }
  }
  waiting_.swap(kept);
  return dropped;
}

void backend_conn::admit_waiting() {
  expire_waiting();
  const std::size_t cap = server_->settings().max_inflight;
  bool any = false;
  while (!waiting_.empty() && inflight_.size() < cap) {
    entry e = waiting_.front();
    waiting_.pop_front();
    if (e.slot->orphaned() && orphan_read(e)) {
      finish(e, false);  // its client is gone and it changes nothing: not sent
      continue;
    }
    if (!e.started) {
      // An orphan's write is sent all the same (the client sent it; the
      // orphan owns a copy of its key and value, request_slot::orphan).
      if (!start_call(e)) continue;
    } else if (e.proto != proto_) {
      // Started for what the server spoke before a reconnect taught
      // otherwise (it was replaced by another version): cannot be sent.
      fail_entry(e, failure_kind::Connection);
      continue;
    }
    encode(e);
    inflight_.push_back(e);
    any = true;
  }
  if (any) {
    writer_wake_.signal();
    reader_wake_.signal();
  }
}

void backend_conn::finish(entry& e, bool answered) {
  count_done(e, answered);
  release_call(e);
  e.slot->call_done();
}

void backend_conn::count_done(entry& e, bool answered) {
  if (answered) {
    counters().replies.add();
    if (!e.slot->orphaned()) {
      const protocol::reply_tally t = e.call->tally();
      for (std::size_t i = 0; i < t.size(); ++i) {
        if (t[i] != 0) counters().results[i].add(t[i]);
      }
    }
    const uint64_t micros = static_cast<uint64_t>(std::max<int64_t>(0, mm::now_ns() - e.started_ns)) / 1000;
    counters().latency.record(micros);
    counters().recent_latency.add(static_cast<double>(micros));
    server_->record_success();
  }
  if (e.shadow) counters().shadow_outstanding.fetch_sub(1, std::memory_order_relaxed);
  pool_group_call_done(worker_, e.pool_group, *e.slot, e.keys, e.started_ns);
}

void backend_conn::release_call(entry& e) {
  if (open_line_ == e.call) open_line_ = nullptr;
  if (free_calls_.size() < kKeepFreeCalls) {
    free_calls_.emplace_back(e.call);
  } else {
    delete e.call;
  }
  e.call = nullptr;
}

// The client gets the timeout failure now, counted as today's timeout was
// (failures_timeout; the server's failure is recorded once per scan by
// abandon_expired), and its slot back (call_done): from here on the slot
// is the client's, so the call copies what frames the reply into itself
// (backend_call::abandon) and the entry keeps no slot. An orphan's slot is
// released the same way (its copy of the keys goes with it). The entry is
// no longer in the `inflight` gauge (mcrouter's inflight_reqs leaves timed-out
// requests out too): it counts requests clients wait for.
void backend_conn::abandon(entry& e) {
  counters().failures[static_cast<int>(failure_kind::Timeout)].add();
  counters().inflight.fetch_sub(1, std::memory_order_relaxed);
  ++abandoned_;
  // Its get line, if still open in out_, takes no more keys: the next get
  // starts a line of its own.
  if (open_line_ == e.call) open_line_ = nullptr;
  e.call->abandon(!e.slot->orphaned(), call_failure_of(failure_kind::Timeout), call_failure_of(server_->down_cause()));
  count_done(e, false);
  flow::request_slot* slot = e.slot;
  e.slot = nullptr;
  slot->call_done();
}

void backend_conn::drop_abandoned(entry& e, bool read) {
  --abandoned_;
  if (read) counters().late_replies.add();
  release_call(e);
}

void backend_conn::fail_entry(entry& e, failure_kind why) {
  counters().failures[static_cast<int>(why)].add();
  fail_call(e, why);
}

void backend_conn::fail_call(entry& e, failure_kind why, int connect_errno) {
  if (!e.slot->orphaned()) {
    // Never started (auto, nothing learned yet): started as for meta, which
    // refuses no key, so the client gets this failure.
    if (!e.started) e.call->start(e.slot->req, protocol::backend_protocol::Meta, e.slot->result, e.keys);
    e.call->fail(call_failure_of(why), call_failure_of(server_->down_cause()), connect_errno);
  }
  finish(e, false);
}

void backend_conn::fail_waiting(failure_kind why) {
  while (!waiting_.empty()) {
    entry e = waiting_.front();
    waiting_.pop_front();
    fail_entry(e, why);
  }
}

void backend_conn::break_connection(failure_kind why) {
  if (state_ != state::Ready) return;
  state_ = state::Broken;
  if (server_->record_failure(why)) start_prober(server_);
  bool first = true;
  while (!inflight_.empty()) {
    entry e = inflight_.front();
    inflight_.pop_front();
    if (e.slot == nullptr) {
      // Abandoned: its client had its timeout. A head abandoned took `why`
      // (the late bound's close): the live ones behind fail as Connection.
      drop_abandoned(e, false);
    } else {
      counters().inflight.fetch_sub(1, std::memory_order_relaxed);
      fail_entry(e, first ? why : failure_kind::Connection);
    }
    first = false;
  }
  next_deadline_ns_ = kNever;
  out_.clear();
  open_line_ = nullptr;
  if (io_) ::shutdown(io_->fd(), SHUT_RDWR);  // ends a read or write in progress
  writer_wake_.signal();
  reader_wake_.signal();
}

void backend_conn::peer_closed() {
  if (carried_ && !closing_) connect_idle_ = true;
  carried_ = false;
}

void backend_conn::recycle_idle() {
  if (state_ != state::Ready) return;
  spdlog::debug("pool {}: {} closed an idle connection", server_->pool(), server_->address());
  counters().idle_closes.add();
  state_ = state::Broken;
  ::shutdown(io_->fd(), SHUT_RDWR);
  writer_wake_.signal();
}

void backend_conn::closed_unused() {
  if (state_ != state::Ready) return;
  note_connect_failure(failure_kind::Connect, "closed by the server before any request");
  state_ = state::Broken;
  ::shutdown(io_->fd(), SHUT_RDWR);
  writer_wake_.signal();
}

void backend_conn::close_when_idle() {
  closing_ = true;
  writer_wake_.signal();
  reader_wake_.signal();
}

void backend_conn::connect_now() {
  if (state_ != state::Idle) return;
  connect_idle_ = true;
  writer_wake_.signal();
  if (!coroutines_started_) start_coroutines();
}

void backend_conn::start_coroutines() {
  coroutines_started_ = true;
  writer_done_ = false;
  reader_done_ = false;
  const std::string name = "backend " + server_->pool() + "/" + server_->address();
  mm::coroutine_create(name + " writer", [this] { writer_main(); });
  mm::coroutine_create(name + " reader", [this] { reader_main(); });
}

// Idle: wait for a request (or connect_idle_), close when asked to and
// nothing waits, fail the waiting at once while the server is marked down,
// else go Connecting. Returns true when the wait was cancelled.
bool backend_conn::writer_idle() {
  if (waiting_.empty() && (closing_ || !connect_idle_)) {
    if (closing_) {
      state_ = state::Closed;
      return false;
    }
    return writer_wake_.wait(kIdleWaitMs) == mm::wait_status::Cancelled;
  }
  connect_idle_ = false;
  if (!server_->up()) {
    fail_waiting(failure_kind::Down);
    return false;
  }
  state_ = state::Connecting;
  return false;
}

// With `protocol: auto`, ask a fresh link what it speaks. `mn` is a request
// like any: it has the pool's request timeout, not the connect's (a server
// slower than connect_timeout would otherwise fail every request queued
// behind the probe, which it would have answered in time). On a failed probe
// the link is closed and `why`/`error` say why. Returns true when cancelled.
bool backend_conn::learn_protocol(backend_link& link, failure_kind& why, std::string& error) {
  const server_settings& st = server_->settings();
  const protocol_probe probe = probe_protocol(link, mm::deadline_after(static_cast<mm::millis>(st.timeout_ms)));
  if (probe.ok) {
    if (!proto_known_ || proto_ != probe.learned) {
      spdlog::info("pool {}: {} speaks {}", server_->pool(), server_->address(),
                   probe.learned == protocol::backend_protocol::Meta ? "meta" : "ascii (no meta)");
    }
    proto_ = probe.learned;
    proto_known_ = true;
    server_->learned_protocol(proto_ == protocol::backend_protocol::Meta);
    return false;
  }
  link.close();
  if (probe.cancelled) return true;
  why = probe.why;
  error = probe.error;
  return false;
}

// A connect (or probe) failed: logged, the server's failure recorded (which
// may mark it down and start its prober), and the requests that never left
// fail with the connect's reason (counted once, as one failed connect).
void backend_conn::note_connect_failure(failure_kind why, const std::string& error) {
  spdlog::warn("pool {}: connect to {}: {}", server_->pool(), server_->address(), error);
  server_->set_last_error(error);
  if (server_->record_failure(why)) start_prober(server_);
  counters().failures[static_cast<int>(why)].add();
}

void backend_conn::connect_failed(failure_kind why, const std::string& error, int err) {
  note_connect_failure(why, error);
  // mcrouter counts the connect's failure and each request it failed.
  server_->add_failures(static_cast<unsigned>(waiting_.size()));
  while (!waiting_.empty()) {
    entry e = waiting_.front();
    waiting_.pop_front();
    fail_call(e, why, why == failure_kind::Connect ? -err : 0);
  }
  state_ = state::Idle;
}

// Connecting: connect, the TLS handshake for a TLS pool, then with
// `protocol: auto` the probe, all within the connect's deadline; Ready with
// the waiting calls admitted, or Idle with them failed. Returns true when
// cancelled.
bool backend_conn::writer_connect() {
  const server_settings& st = server_->settings();
  const int64_t deadline = mm::deadline_after(static_cast<mm::millis>(st.connect_timeout_ms));
  backend_link link = connect_backend(*server_, deadline);
  if (link.cancelled) return true;
  failure_kind why = link.why;
  std::string error = link.error;
  if (link && st.protocol == kinds::backend_protocol::Auto && learn_protocol(link, why, error)) return true;
  if (!link) {
    connect_failed(why, error, link.err);
    return false;
  }
  std::unique_ptr<mm::io> io = std::move(link.io);
  tls_ = std::move(link.tls);
  server_->set_last_error("");
  carried_ = false;
  connected_ns_ = mm::now_ns();
  io_ = std::move(io);
  counters().connects.add();
  connections_changed(1);
  state_ = state::Ready;
  // The wait for a connection has its own bound (connect_timeout, and
  // the probe's): a request's timeout counts from when it can be sent.
  restart_waiting_deadlines(static_cast<int64_t>(st.timeout_ms) * 1000000);
  admit_waiting();
  reader_wake_.signal();
  return false;
}

// Ready: admit what waits, then write everything the clients queued this
// turn in one write (they keep appending to out_ while it is written); with
// nothing to write, wait, or when closing and nothing is left, go Broken (the
// socket shut down, the reader woken to leave). Returns true when cancelled.
bool backend_conn::writer_send() {
  const server_settings& st = server_->settings();
  admit_waiting();
  if (out_.empty()) {
    // Abandoned entries are not waited for: their clients have been answered.
    if (closing_ && inflight_.size() == abandoned_ && waiting_.empty()) {
      while (!inflight_.empty()) {  // their replies will not be read on another socket
        entry e = inflight_.front();
        inflight_.pop_front();
        drop_abandoned(e, false);
      }
      state_ = state::Broken;  // nothing left: close the socket and end
      ::shutdown(io_->fd(), SHUT_RDWR);
      reader_wake_.signal();
      return false;
    }
    return writer_wake_.wait(kIdleWaitMs) == mm::wait_status::Cancelled;
  }
  sending_.swap(out_);
  open_line_ = nullptr;
  // TLS: SSL_write on the socket (the reader may be inside SSL_read on
  // it meanwhile); plain: io_uring's batched send.
  ssize_t w = tls_ ? tls_->write(sending_.data(), sending_.size(), static_cast<mm::millis>(st.timeout_ms))
                   : io_->write_batched(sending_.data(), sending_.size(), static_cast<mm::millis>(st.timeout_ms));
  sending_.clear();
  if (sending_.capacity() > kKeepWriteBuffer) std::string().swap(sending_);
  if (w == -ECANCELED) return true;
  carried_ = true;
  if (w == -ETIMEDOUT) {
    break_connection(failure_kind::Timeout);
  } else if (w < 0) {
    peer_closed();
    break_connection(failure_kind::Connection);
  }
  return false;
}

// Broken: the reader may still be inside a read (shutdown() ended it); wait
// until it has left, then close the socket, drop the buffers and the parser's
// state, and go Idle (or Closed when closing with nothing waiting). Returns
// true when cancelled.
bool backend_conn::writer_close() {
  if (!reader_parked_) {
    reader_wake_.signal();
    return writer_wake_.wait(10) == mm::wait_status::Cancelled;
  }
  tls_.reset();  // no close_notify: the socket is shut down already
  io_->close();
  io_.reset();
  connections_changed(-1);
  in_start_ = 0;
  in_len_ = 0;
  if (in_.size() > kKeepReadBuffer) std::string().swap(in_);
  parser_.reset();
  out_.clear();
  open_line_ = nullptr;
  state_ = closing_ && waiting_.empty() ? state::Closed : state::Idle;
  return false;
}

// The connection's state machine, one step per state (writer_idle,
// writer_connect, writer_send, writer_close). Clients only queue; this
// coroutine connects, writes, and closes; the reader only reads and breaks.
// [the worker that owns the connection; its `backend POOL/ADDR writer`
// coroutine] Every wait has the pool's timeouts (connect_timeout for connect
// and probe, timeout for a write) or kIdleWaitMs; nothing is locked (one
// machine). Bounds: what it writes is what submit() queued, at most
// max_inflight calls on the wire and max_queued waiting.
void backend_conn::writer_main() {
  bool cancelled = false;
  while (!cancelled && state_ != state::Closed) {
    switch (state_) {
      case state::Idle: cancelled = writer_idle(); break;
      case state::Connecting: cancelled = writer_connect(); break;
      case state::Ready: cancelled = writer_send(); break;
      case state::Broken: cancelled = writer_close(); break;
      case state::Closed: break;
    }
  }
  // Cancelled (the worker stops) or closed: nothing more will be answered.
  if (state_ == state::Ready) break_connection(failure_kind::Connection);
  fail_waiting(failure_kind::Connection);
  state_ = state::Closed;
  writer_done_ = true;
  close_if_last();
  reader_wake_.signal();
}

// The socket is closed on this machine by whichever coroutine ends last: the
// reader may still be inside a read when the writer ends (a stop cancels
// both), and a socket must never outlive its machine (io's destructor would
// reach a backend that is gone).
void backend_conn::close_if_last() {
  if (!writer_done_ || !reader_done_ || !io_) return;
  if (tls_) tls_->shutdown();
  tls_.reset();
  io_->close();
  io_.reset();
  connections_changed(-1);
}

// Reads whenever the connection is Ready, idle too: a server that closes an
// idle connection (a restart, an idle timeout) is noticed at once and the
// socket recycled without a failure, so the next request connects afresh
// instead of being written into a dead socket and failing.
void backend_conn::reader_main() {
  const mm::millis idle_read_ms =
      std::min<mm::millis>(kIdleWaitMs, static_cast<mm::millis>(server_->settings().timeout_ms));
  for (;;) {
    if (state_ == state::Closed && writer_done_) break;
    if (state_ != state::Ready) {
      if (reader_wake_.wait(kIdleWaitMs) == mm::wait_status::Cancelled) break;
      continue;
    }
    // Room to read: move the unparsed tail to the front, then grow (only)
    // if a large value needs more than the buffer holds.
    if (in_start_ > 0) {
      std::memmove(in_.data(), in_.data() + in_start_, in_len_ - in_start_);
      in_len_ -= in_start_;
      in_start_ = 0;
    }
    if (in_.size() - in_len_ < kReadRoom) in_.resize(std::max(in_.size() * 2, in_len_ + kReadRoom));
    // A request submitted during this read has a deadline after the read's
    // end (idle_read_ms <= the pool's timeout), so no timeout is missed, also
    // while only abandoned entries are in flight (their bound is far off).
    const int64_t check = next_check_ns();
    mm::millis wait = check == kNever ? idle_read_ms : std::min(idle_read_ms, mm::millis_until(check));
    if (!waiting_.empty()) wait = std::min(wait, mm::millis_until(waiting_.front().deadline_ns));
    reader_parked_ = false;
    ssize_t n = tls_ ? tls_->read(in_.data() + in_len_, in_.size() - in_len_, wait)
                     : io_->read(in_.data() + in_len_, in_.size() - in_len_, wait);
    reader_parked_ = true;
    if (n > 0) in_len_ += static_cast<std::size_t>(n);
    if (n == -ECANCELED) break;
    if (state_ != state::Ready) continue;  // broken meanwhile: the writer cleans up
    if (n == -ETIMEDOUT) {
      expire_waiting();
      check_deadlines();
      continue;
    }
    if (n <= 0) {
      const bool unused = !carried_ && mm::now_ns() - connected_ns_ < kUnusedCloseMs * 1000000;
      peer_closed();
      if (inflight_.empty() && unused) {
        closed_unused();
      } else if (inflight_.empty()) {
        recycle_idle();
      } else {
        break_connection(failure_kind::Connection);
      }
      continue;
    }
    if (!process_input()) {
      break_connection(failure_kind::BadReply);
    } else if (inflight_.empty() && in_start_ == in_len_ && in_.size() > kKeepReadBuffer) {
      // Every reply taken: a buffer grown for a large value goes back now,
      // not when the connection ends (a pool's connections live for days).
      std::string().swap(in_);
      in_start_ = 0;
      in_len_ = 0;
    } else {
      // A backend that keeps dripping bytes never lets a read time out: the
      // deadlines are checked after every read too.
      check_deadlines();
    }
  }
  reader_parked_ = true;
  reader_done_ = true;
  close_if_last();
  writer_wake_.signal();
}

// Abandons every live call in flight whose deadline has passed (not only
// the head's: a call re-encoded for its next step sits behind later ones),
// then closes the connection if its abandoned entries are past their bound.
// [reader, after each read and each read's timeout]
void backend_conn::check_deadlines() {
  abandon_expired();
  if (state_ != state::Ready || !late_bound_passed()) return;
  spdlog::warn("pool {}: {} left {} timed-out requests unanswered: closing the connection", server_->pool(),
               server_->address(), abandoned_);
  counters().late_closes.add();
  break_connection(failure_kind::Timeout);
}

// One pass over inflight_ (at most max_inflight entries) once the earliest
// deadline it knows has passed; it learns the next one on the way, so a pass
// comes at most once per deadline that could have passed, not per read. One
// failure recorded for the server per pass, as one timeout recorded one when
// it closed the connection: many requests timing out together are one event
// for failure_limit.
void backend_conn::abandon_expired() {
  if (next_deadline_ns_ == kNever) return;  // nothing live in flight: no clock read per read
  const int64_t now = mm::now_ns();
  if (now < next_deadline_ns_) return;
  int64_t next = kNever;
  bool any = false;
  // By index: a client woken by call_done may not submit here and now, but
  // a deque's iterators would not survive a push_back if it did.
  for (std::size_t i = 0; i < inflight_.size(); ++i) {
    entry& e = inflight_[i];
    if (e.slot == nullptr) continue;
    if (e.deadline_ns <= now) {
      abandon(e);
      any = true;
    } else {
      next = std::min(next, e.deadline_ns);
    }
  }
  next_deadline_ns_ = next;
  if (any && server_->record_failure(failure_kind::Timeout)) start_prober(server_);
}

// The connection is given up for its abandoned entries when they fill the
// in-flight cap (nothing else could be sent on it), or when the reply the
// server owes first (the head) is abandoned and late by more than the pool's
// late_reply_timeout: a server that answers late keeps answering heads, one
// that stopped does not. mcrouter has no such bound (its inactive-connection
// reset needs a minute without requests); without one a server that never
// answers would hold its socket for as long as requests keep coming.
bool backend_conn::late_bound_passed() const {
  if (abandoned_ == 0) return false;
  if (abandoned_ >= server_->settings().max_inflight) return true;
  const entry& head = inflight_.front();
  const int64_t bound = static_cast<int64_t>(server_->settings().late_reply_timeout_ms) * 1000000;
  return head.slot == nullptr && mm::now_ns() - head.deadline_ns >= bound;
}

int64_t backend_conn::next_check_ns() const {
  int64_t at = next_deadline_ns_;
  if (!inflight_.empty() && inflight_.front().slot == nullptr) {
    at = std::min(
        at, inflight_.front().deadline_ns + static_cast<int64_t>(server_->settings().late_reply_timeout_ms) * 1000000);
  }
  return at;
}

bool backend_conn::process_input() {
  using progress = protocol::backend_call::progress;
  parser_.set_max_value(owner_.max_value());
  while (!inflight_.empty()) {
    protocol::reply_piece piece;
    std::size_t used = 0;
    const std::string_view input(in_.data() + in_start_, in_len_ - in_start_);
    const protocol::parse_status ps = parser_.next(input, inflight_.front().shape, piece, used);
    if (ps == protocol::parse_status::NeedMore) break;
    if (ps == protocol::parse_status::Error) return false;
    // Offer the piece to the head call; calls that share a get line pass it
    // on (complete) until one takes it.
    progress p = progress::Passed;
    while (p == progress::Passed) {
      if (inflight_.empty()) return false;  // a line's last call passed: cannot happen
      entry e = inflight_.front();
      if (e.slot == nullptr) {
        // Abandoned (timed out): its call frames the late reply by what it
        // kept, and it is dropped.
        p = e.call->on_orphan_piece(piece);
        if (p == progress::More) break;
        inflight_.pop_front();
        drop_abandoned(e, p != progress::BadReply);
        if (p == progress::BadReply) {
          counters().failures[static_cast<int>(failure_kind::BadReply)].add();
          return false;
        }
        continue;
      }
      // A client that went away left only its request's keys: the call
      // frames the reply by them and its own state.
      p = e.slot->orphaned() ? e.call->on_orphan_piece(piece) : e.call->on_piece(piece);
      e.slot->account_reply();  // the client's bound on held replies (request_slot.h)
      switch (p) {
        case progress::More: break;
        case progress::Passed:
        case progress::Done:
        case progress::BadReply:
          inflight_.pop_front();
          counters().inflight.fetch_sub(1, std::memory_order_relaxed);
          finish(e, p != progress::BadReply);
          if (p == progress::BadReply) {
            counters().failures[static_cast<int>(failure_kind::BadReply)].add();
            return false;
          }
          break;
        case progress::NextStep:
          // The next step's reply comes after everything already sent.
          inflight_.pop_front();
          encode_step(e);
          inflight_.push_back(e);
          writer_wake_.signal();
          break;
      }
    }
    in_start_ += used;
  }
  admit_waiting();
  // Bytes nobody asked for.
  return inflight_.empty() ? in_start_ == in_len_ : true;
}

}  // namespace ithaca::proxy
