#include "client.h"

#include <unistd.h>

#include <cerrno>

#include <cstring>

#include <spdlog/spdlog.h>

#include "ascii_auth.h"
#include "reply.h"
#include "tls_stream.h"
#include "text_replies.h"
#include "watch_events.h"
#include "watcher.h"

namespace ithaca::server {

namespace {
// Reads land in this buffer on the session coroutine's own stack; a parked
// connection holds no buffer at all, and only an incomplete request is copied
// to the session's `pending_` string (a connection is not parked with one).
constexpr size_t kStackReadSize = 4096;
}  // namespace

std::unique_ptr<connection> open_connection(const worker_shared& shared, accepted_socket s) {
  auto conn = mm::io::attach(s.fd);
  if (!conn) {
    spdlog::warn("client {}: attach failed: {}", s.peer, std::strerror(errno));
    ::close(s.fd);
    if (s.listener_clients) s.listener_clients->fetch_sub(1);
    return nullptr;
  }
  if (s.peer.starts_with("tcp:")) mm::set_nodelay(s.fd, true);
  protocol::parser_settings ps = shared.parser;
  // A listener's proto[...] prefix binds its connections, but not past -S's
  // or -Y's binding: the login's protocol is the only way in.
  if (!shared.auth_binds_protocol) {
    if (s.protocol != kinds::binding_protocol::Negotiating) ps.binding_protocol = s.protocol;
  }
  auto c = std::make_unique<connection>(ps);
  c->io = std::move(conn);
  c->conn = c->io.get();
  thread_local uint64_t next_tag = 0;  // per worker: its clients spread evenly
  c->tag = next_tag++;
  c->root = s.root;
  c->tls = s.tls;
  c->tls_peer = s.tls_peer;
  c->listener_clients = s.listener_clients;
  c->id = shared.conns->add(conn_info{s.peer, std::move(s.listener), shared.clock->uptime_s()});
  c->peer = std::move(s.peer);
  stats::watch::conn_new(c->peer, c->id);
  return c;
}

void close_connection(const worker_shared& shared, connection& c, std::string_view reason) {
  if (c.transport) c.transport->shutdown();
  c.transport.reset();
  if (c.io) c.io->close();
  c.conn = nullptr;
  stats::watch::conn_close(c.peer, reason, c.id);
  shared.conns->remove(c.id);
  if (c.listener_clients) c.listener_clients->fetch_sub(1);
  c.listener_clients = nullptr;
}

client::client(const worker_shared& shared, stats::command_counters& counters)
    : shared_(shared),
      live_(*shared.live),
      counters_(counters),
      ctx_(*shared.store, counters),
      server_{*shared.stats, counters, live_->enable_shutdown},
      loop_{&ctx_, server_, this, live_->routes.get(), inflight_, out_, shared.backends, shared.acks, shared.async} {
  server_.config_file = live_->config_file;
  server_.config_loaded_at = live_->config_loaded_at;
  server_.info = live_->info.get();
  server_.can_watch = live_->enable_watch;
  server_.items = &dump_;
  server_.dump_enabled = live_->enable_dumping;
  server_.flush_enabled = live_->enable_flush_all;
  if (shared_.auth != nullptr && shared_.auth->sasl_enabled()) server_.sasl = shared_.auth;
}

// One acquire load per batch; the rest only after a reload (snapshot.h).
void client::refresh_live() {
  if (!live_.refresh()) return;
  server_.enable_shutdown = live_->enable_shutdown;
  server_.can_watch = live_->enable_watch;
  server_.dump_enabled = live_->enable_dumping;
  server_.flush_enabled = live_->enable_flush_all;
  server_.config_file = live_->config_file;
  server_.config_loaded_at = live_->config_loaded_at;
  server_.info = live_->info.get();
  loop_.tree = live_->routes.get();
  pick_inspector();
}

// The largest value this connection's tree takes: the store's limit where
// a request may reach it, else what passes through to servers.
std::size_t client::value_limit() const {
  if (loop_.tree->root_reaches_store(loop_.root)) return live_->item_size_max;
  return std::max(live_->item_size_max, live_->max_value_size);
}

void client::pick_inspector() {
  const bool to_pools = !loop_.tree->pools().empty() && !loop_.tree->root_is_local(loop_.root);
  server_.items = to_pools ? static_cast<commands::item_dump_source*>(&pools_) : &dump_;
  server_.pool_stats = to_pools ? &pools_ : nullptr;
}

// The idle timeout of the snapshot the last batch ran on: a reload reaches
// a parked connection when it next wakes, not while it sleeps.
mm::millis client::idle_timeout() const {
  return live_->idle_timeout_ms > 0 ? static_cast<mm::millis>(live_->idle_timeout_ms) : mm::kForever;
}

// One turn of a connection on this client (the session's coroutine): an
// expired park is closed (idle_timeout, or error when the kernel gave up on
// the peer); else the stream is opened (TLS handshake on a TLS listener),
// the requests served (serve_requests) until the connection parks again
// (Parked) or ends, with `watch` turning it into a log receiver. A closed
// connection leaves nothing to the next one: unsent replies dropped, requests
// in flight orphaned, its buffer trimmed, the socket closed with memcached's
// reason; a `shutdown` command then asks the pooler to stop. [the worker's
// session coroutine that owns the client; no lock; suspends in reads, writes
// and settles] Returns Parked or Closed (the caller frees `c` then).
client::outcome client::serve(connection& c, mm::park_set& parked) {
  mm::io& conn = *c.io;
  std::string_view reason = "normal";  // conn_close's reason (memcached's close_reasons)
  flow::exec_action action = flow::exec_action::Close;
  if (c.expired) {
    // Parked past its idle timeout (a peer the kernel gave up on: error).
    reason = mm::tcp_closed(conn.fd()) ? "error" : "idle_timeout";
    if (reason == "idle_timeout") counters_.idle_kicks.add(1);
  } else if (!c.transport && !(c.transport = open_stream(c))) {
    reason = "error";  // the TLS handshake failed (counted)
  } else {
    loop_.root = c.root;
    pick_inspector();
    conn_ = c.transport.get();
    ctx_.drain = this;
    ctx_.conn_id = c.id;
    inflight_.set_id(c.tag);
    server_.quit = false;
    server_.auth = &c.auth;
    action = serve_requests(c, parked, reason);
    if (action == flow::exec_action::Continue) {
      ctx_.drain = nullptr;
      conn_ = nullptr;
      server_.auth = nullptr;  // the connection's own: not left to the next one
      return outcome::Parked;
    }
    // `watch`: from here the connection only receives log lines; if every
    // slot is taken it is told so and goes on as a client (parked no more).
    while (action == flow::exec_action::Watch) {
      const int slot = stats::watch::hub::instance().add(server_.watch_kinds);
      if (slot >= 0) {
        serve_watcher(*c.transport, slot, server_.watch_kinds, counters_);
        stats::watch::hub::instance().remove(slot);
        reason = mm::coroutine_cancelled() ? "shutdown" : "normal";
        break;
      }
      protocol::encode_ascii_line(out_, protocol::kReplyWatcherTooMany);
      if (!flush(*c.transport)) {
        reason = "error";
        break;
      }
      action = serve_requests(c, parked, reason);
      if (action == flow::exec_action::Continue) {
        ctx_.drain = nullptr;
        conn_ = nullptr;
        server_.auth = nullptr;
        return outcome::Parked;
      }
    }
    ctx_.drain = nullptr;
    conn_ = nullptr;
    server_.auth = nullptr;
  }
  // What the connection left behind must not reach the next one: its
  // unsent replies are dropped. execute_input has already orphaned any
  // request still in flight (while its input lived); this only guards a
  // path that returns with the queue still holding some.
  if (!inflight_.empty()) inflight_.abandon();
  pending_.clear();
  if (pending_.capacity() > 4 * shared_.read_buffer_size) std::string().swap(pending_);
  out_.consume(out_.size());
  close_connection(shared_, c, reason);
  if (action == flow::exec_action::Shutdown && shared_.request_shutdown) shared_.request_shutdown();
  return outcome::Closed;
}

// The connection's stream: plain, or TLS on a TLS listener once the
// handshake is done (tls_stream.h), made by the first session that serves
// it (never by the worker's main coroutine: a handshake waits). The handshake has the idle timeout, or
// without one the write timeout: a client that stalls in it is closed.
// nullptr if the handshake failed (counted in ssl_handshake_errors).
std::unique_ptr<stream> client::open_stream(const connection& c) {
  mm::io& conn = *c.io;
  const std::string_view peer = c.peer;
  if (!c.tls || !shared_.tls) return std::make_unique<plain_stream>(conn);
  const mm::millis timeout =
      live_->idle_timeout_ms > 0 ? static_cast<mm::millis>(live_->idle_timeout_ms) : shared_.write_timeout_ms;
  std::string why;
  std::unique_ptr<tls_stream> t = tls_stream::accept(conn, *shared_.tls, c.tls_peer, timeout, &why);
  if (!t) {
    spdlog::debug("client {}: TLS handshake failed: {}", peer, why.empty() ? "protocol error" : why);
    return nullptr;
  }
  spdlog::debug("client {}: {} handshake done, kernel TLS send {} receive {}", peer, t->version(),
                t->ktls_send() ? "on" : "off", t->ktls_recv() ? "on" : "off");
  return t;
}

// Reads and answers requests until a read finds nothing more to do (the
// connection is parked: Continue), the connection ends, or a request changes
// what it is (quit, shutdown, watch); flushes the replies; sets `reason`.
flow::exec_action client::serve_requests(connection& c, mm::park_set& parked, std::string_view& reason) {
  stream& conn = *c.transport;
  protocol::parser& parser = c.parser;
  flow::exec_action action = flow::exec_action::Continue;
  char stack_buf[kStackReadSize];
  bool probing = false;  // the next read only takes what the socket has at once
  refresh_live();
  while (action == flow::exec_action::Continue) {
    const mm::millis idle = idle_timeout();
    ssize_t n;
    if (pending_.empty()) {
      // A TLS connection is not parked: OpenSSL may hold decrypted bytes
      // the socket's readiness cannot tell of; its session reads on.
      n = c.tls ? -EAGAIN : c.io->try_read(stack_buf, sizeof(stack_buf));
      if (n == -EAGAIN) {
        // Nothing in progress: no pending bytes, no reply held back, nothing
        // in flight (execute_input returned). Park it: no stack, no buffer.
        if (!c.tls && !parser.awaiting_data() && out_.empty() && !mm::coroutine_cancelled()) {
          parked.park(c, idle);
          return flow::exec_action::Continue;
        }
        n = read_some(conn, stack_buf, sizeof(stack_buf), idle);
      }
      if (n <= 0) {
        reason = close_reason(n, idle);
        break;
      }
      counters_.bytes_read.add(static_cast<uint64_t>(n));
      refresh_live();
      parser.set_item_size_max(value_limit());
      ctx_.now = shared_.clock->now();
      std::string_view input(stack_buf, static_cast<size_t>(n));
      bool failed = false;
      size_t used = run_input(c, input, conn, action, failed);
      if (failed) {
        reason = "error";
        break;
      }
      if (used < input.size()) pending_.assign(input.substr(used));
    } else {
      // Continue an incomplete request: read straight behind it.
      size_t have = pending_.size();
      size_t room = std::max(shared_.read_buffer_size, have);  // grows geometrically
      pending_.resize(have + room);
      n = read_some(conn, pending_.data() + have, room, probing ? 0 : idle);
      if (n <= 0) {
        reason = probing && n == -ETIMEDOUT ? "error" : close_reason(n, idle);
        break;
      }
      pending_.resize(have + static_cast<size_t>(n));
      counters_.bytes_read.add(static_cast<uint64_t>(n));
      refresh_live();
      parser.set_item_size_max(value_limit());
      ctx_.now = shared_.clock->now();
      bool failed = false;
      size_t used = run_input(c, pending_, conn, action, failed);
      if (failed) {
        reason = "error";
        break;
      }
      pending_.erase(0, used);
      // Give a large buffer back once the big request it held is done.
      if (pending_.empty() && pending_.capacity() > 4 * shared_.read_buffer_size) std::string().swap(pending_);
    }
    // Hold the replies while a value is incomplete, as memcached does (see
    // parser::awaiting_data): a multi-get with a bad key culls those not sent.
    if (!parser.awaiting_data() && !flush(conn)) {
      reason = "error";
      break;
    }
    // memcached's 2 KiB rule for a command line still without its newline
    // (parser::closes_partial_line) judges what its 16 KiB read brought: take
    // what the socket has at once first; the line closes if it is still due.
    probing = !pending_.empty() && parser.closes_partial_line(pending_);
    // A client that keeps sending would keep this session to itself: when
    // other connections wait for one, let them (and the loop's poll) go first.
    // A TLS connection is never parked, so its peers wait in their own
    // sessions' reads, unseen by the queue: it always lets them go first
    // (OpenSSL may hand over buffered records without the session ever
    // suspending).
    if (c.tls || parked.queued() > 0) mm::yield();
  }
  if (action != flow::exec_action::Continue) flush(conn);
  if (action == flow::exec_action::Close) reason = server_.quit ? "normal" : "error";
  if (action == flow::exec_action::Shutdown) reason = "shutdown";
  // Ended by a read: not Continue, which says "parked".
  if (action == flow::exec_action::Continue) action = flow::exec_action::Close;
  return action;
}

// memcached's -R: after reqs_per_event requests of one read, the replies so
// far are sent and the session yields to the worker's other coroutines
// (memcached returns to its event loop), counted in conn_yields; then the
// rest of the input runs. The input stays put meanwhile: the session's stack
// buffer or its pending_ string, which nothing else touches. [the session's
// coroutine; suspends in the flush and the yield, no lock held]
// -Y: the authentication comes first (authenticate_ascii); the rest of the
// input after the login runs as requests.
size_t client::run_input(connection& c, std::string_view input, stream& conn, flow::exec_action& action, bool& failed) {
  size_t used = 0;
  if (!c.auth.authenticated && shared_.auth != nullptr && shared_.auth->ascii_enabled()) {
    used = authenticate_ascii(c, input, action);
    if (!c.auth.authenticated || action != flow::exec_action::Continue) return used;
  }
  // Requests in flight stay in flight across a yield (execute_input settles
  // them only in its last call, which has no budget left to yield on): the
  // input they point into stays put meanwhile. After a failed write or a
  // cancel, the rest of what was read runs at once: memcached applies every
  // request it has read (a client that reset after a pipeline of sets still
  // has them stored); their replies go nowhere.
  bool last_run = false;
  for (;;) {
    loop_.request_budget = last_run ? 0 : live_->reqs_per_event;
    used += route::execute_input(c.parser, input.substr(used), loop_, action);
    if (last_run || !loop_.yield_due || action != flow::exec_action::Continue) break;
    counters_.conn_yields.add();
    if (!flush(conn)) {
      failed = true;
      last_run = true;
      continue;
    }
    mm::yield();
    // Cancelled: the next read says so and ends the connection.
    last_run = mm::coroutine_cancelled();
    ctx_.now = shared_.clock->now();
  }
  loop_.request_budget = 0;
  return used;
}

// memcached's try_read_command_asciiauth, one step at a time until the input
// is used up, more is needed, or the client is in (the rest of the input is
// then its first commands). Each attempt answered counts in auth_cmds, each
// refused one in auth_errors too, as memcached counts them.
size_t client::authenticate_ascii(connection& c, std::string_view input, flow::exec_action& action) {
  using kind = protocol::ascii_auth_step::kind;
  size_t used = 0;
  while (used < input.size()) {
    const protocol::ascii_auth_step step = protocol::next_ascii_auth(input.substr(used));
    switch (step.what) {
      case kind::NeedMore: return used;
      case kind::Close: action = flow::exec_action::Close; return used;
      case kind::Reply: protocol::encode_ascii_line(out_, step.reply); break;
      case kind::Check:
        counters_.auth_cmds.add();
        if (shared_.auth->check_ascii(step.user, step.password)) {
          c.auth.authenticated = true;
          protocol::encode_ascii_line(out_, protocol::kReplyAuthStored);
          return used + step.consumed;
        }
        counters_.auth_errors.add();
        protocol::encode_ascii_line(out_, protocol::kReplyAuthFailure);
        break;
    }
    used += step.consumed;
  }
  return used;
}

// memcached's close reason for a read that ended the connection.
std::string_view client::close_reason(ssize_t n, mm::millis idle) {
  if (n == 0) return "normal";
  if (n == -ECANCELED) return "shutdown";
  if (n == -ETIMEDOUT && idle != mm::kForever && !mm::tcp_closed(conn_->fd())) {
    counters_.idle_kicks.add(1);
    return "idle_timeout";
  }
  return "error";
}

// A busy client keeps the request slots of its last batches (a pipeline of
// routed requests would otherwise allocate and free them every batch); once
// it has been quiet for kTrimAfterMs it gives all but one back, so an idle
// connection holds little.
ssize_t client::read_some(stream& conn, char* buf, size_t len, mm::millis idle) {
  if (inflight_.allocated() > flow::inflight_queue::kKeepSlots && (idle == mm::kForever || idle > kTrimAfterMs)) {
    ssize_t n = conn.read(buf, len, kTrimAfterMs);
    if (n != -ETIMEDOUT) return n;
    inflight_.trim();
    if (idle != mm::kForever) idle -= kTrimAfterMs;
  }
  return conn.read(buf, len, idle);
}

// The executor only ever appends to this client's out_.
bool client::drain(protocol::out_buffer& out) { return &out == &out_ && conn_ && flush(*conn_); }

// A reset (or failed) TCP connection is in state CLOSE; a FIN only makes it
// CLOSE_WAIT, which still gets its replies.
bool client::peer_gone() const { return conn_ != nullptr && mm::tcp_closed(conn_->fd()); }

// Writes the batch's replies with as few writev calls as the kernel allows.
bool client::flush(stream& conn) {
  while (!out_.empty()) {
    auto iov = out_.iovecs();
    ssize_t w = conn.writev(iov.data(), static_cast<int>(iov.size()), shared_.write_timeout_ms);
    if (w <= 0) return false;
    counters_.bytes_written.add(static_cast<uint64_t>(w));
    out_.consume(static_cast<size_t>(w));
  }
  return true;
}

}  // namespace ithaca::server
