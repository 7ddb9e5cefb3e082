#include "client.h"

#include <unistd.h>

#include <cerrno>

#include <cstring>

#include <spdlog/spdlog.h>

#include "reply.h"
#include "tls_stream.h"
#include "text_replies.h"
#include "watch_events.h"
#include "watcher.h"

namespace ithaca::server {

namespace {
// Reads of an idle connection land in this buffer on the coroutine's own
// stack, so an idle connection holds no heap buffer at all; only an incomplete
// request is copied to the connection's `pending_` string.
constexpr size_t kStackReadSize = 4096;
// How long a client with spare request slots waits before it frees them.
constexpr mm::millis kTrimAfterMs = 200;
}  // namespace

client::client(const worker_shared& shared, flow::command_counters& counters)
    : shared_(shared),
      live_(*shared.live),
      counters_(counters),
      parser_(shared.parser),
      ctx_(*shared.store, counters),
      server_{*shared.stats, counters, live_->enable_shutdown},
      loop_{&ctx_, server_, this, live_->routes.get(), inflight_, out_, shared.backends, shared.acks, shared.async} {
  parser_.set_item_size_max(live_->item_size_max);
  server_.config_file = live_->config_file;
  server_.config_loaded_at = live_->config_loaded_at;
  server_.can_watch = true;
}

// One acquire load per batch; the rest only after a reload (snapshot.h).
void client::refresh_live() {
  if (!live_.refresh()) return;
  parser_.set_item_size_max(live_->item_size_max);
  server_.enable_shutdown = live_->enable_shutdown;
  server_.config_file = live_->config_file;
  server_.config_loaded_at = live_->config_loaded_at;
  loop_.tree = live_->routes.get();
}

void client::run(const accepted_socket& s) {
  auto conn = mm::io::attach(s.fd);
  if (!conn) {
    spdlog::warn("client {}: attach failed: {}", s.peer, std::strerror(errno));
    ::close(s.fd);
    if (s.listener_clients) s.listener_clients->fetch_sub(1);
    return;
  }
  if (s.peer.starts_with("tcp:")) mm::set_nodelay(s.fd, true);
  loop_.root = s.root;
  ctx_.drain = this;
  uint64_t id = shared_.conns->add(conn_info{s.peer, s.listener, shared_.clock->uptime_s()});
  ctx_.conn_id = id;
  flow::watch::conn_new(s.peer, id);
  std::string_view reason = "normal";  // conn_close's reason (memcached's close_reasons)
  std::unique_ptr<stream> io = open_stream(*conn, s);  // plain, or TLS once its handshake is done
  conn_ = io.get();
  flow::exec_action action = io ? serve_requests(*io, reason) : flow::exec_action::Close;
  if (!io) reason = "error";
  // `watch`: from here the connection only receives log lines; if every
  // slot is taken it is told so and goes on as a client.
  while (action == flow::exec_action::Watch) {
    const int slot = flow::watch::hub::instance().add(server_.watch_kinds);
    if (slot >= 0) {
      serve_watcher(*io, slot, server_.watch_kinds, counters_);
      flow::watch::hub::instance().remove(slot);
      reason = mm::coroutine_cancelled() ? "shutdown" : "normal";
      break;
    }
    protocol::encode_ascii_line(out_, protocol::kReplyWatcherTooMany);
    if (!flush(*io)) {
      reason = "error";
      break;
    }
    action = serve_requests(*io, reason);
  }
  ctx_.drain = nullptr;
  conn_ = nullptr;
  if (io) io->shutdown();
  conn->close();
  flow::watch::conn_close(s.peer, reason, id);
  shared_.conns->remove(id);
  if (s.listener_clients) s.listener_clients->fetch_sub(1);
  if (action == flow::exec_action::Shutdown && shared_.request_shutdown) shared_.request_shutdown();
}

// The connection's stream: plain, or TLS on a TLS listener once the
// handshake is done (tls_stream.h). The handshake has the idle timeout, or
// without one the write timeout: a client that stalls in it is closed.
// nullptr if the handshake failed (counted in ssl_handshake_errors).
std::unique_ptr<stream> client::open_stream(mm::io& conn, const accepted_socket& s) {
  if (!s.tls || !shared_.tls) return std::make_unique<plain_stream>(conn);
  const mm::millis timeout =
      live_->idle_timeout_ms > 0 ? static_cast<mm::millis>(live_->idle_timeout_ms) : shared_.write_timeout_ms;
  std::string why;
  std::unique_ptr<tls_stream> t = tls_stream::accept(conn, *shared_.tls, timeout, &why);
  if (!t) {
    spdlog::debug("client {}: TLS handshake failed: {}", s.peer, why.empty() ? "protocol error" : why);
    return nullptr;
  }
  spdlog::debug("client {}: {} handshake done, kernel TLS send {} receive {}", s.peer, t->version(),
                t->ktls_send() ? "on" : "off", t->ktls_recv() ? "on" : "off");
  return t;
}

// Reads and answers requests until the connection ends or a request changes
// what it is (quit, shutdown, watch); flushes the replies; sets `reason`.
flow::exec_action client::serve_requests(stream& conn, std::string_view& reason) {
  flow::exec_action action = flow::exec_action::Continue;
  char stack_buf[kStackReadSize];
  while (action == flow::exec_action::Continue) {
    // The idle timeout of the snapshot the last batch ran on: a reload
    // reaches an idle connection at its next wait, not during this one.
    const mm::millis idle =
        live_->idle_timeout_ms > 0 ? static_cast<mm::millis>(live_->idle_timeout_ms) : mm::kForever;
    ssize_t n;
    if (pending_.empty()) {
      n = read_some(conn, stack_buf, sizeof(stack_buf), idle);
      if (n <= 0) {
        reason = close_reason(n, idle);
        break;
      }
      counters_.bytes_read.add(static_cast<uint64_t>(n));
      refresh_live();
      ctx_.now = shared_.clock->now();
      std::string_view input(stack_buf, static_cast<size_t>(n));
      size_t used = route::execute_input(parser_, input, loop_, action);
      if (used < input.size()) pending_.assign(input.substr(used));
    } else {
      // Continue an incomplete request: read straight behind it.
      size_t have = pending_.size();
      size_t room = std::max(shared_.read_buffer_size, have);  // grows geometrically
      pending_.resize(have + room);
      n = read_some(conn, pending_.data() + have, room, idle);
      if (n <= 0) {
        reason = close_reason(n, idle);
        break;
      }
      pending_.resize(have + static_cast<size_t>(n));
      counters_.bytes_read.add(static_cast<uint64_t>(n));
      refresh_live();
      ctx_.now = shared_.clock->now();
      size_t used = route::execute_input(parser_, pending_, loop_, action);
      pending_.erase(0, used);
      // Give a large buffer back once the big request it held is done.
      if (pending_.empty() && pending_.capacity() > 4 * shared_.read_buffer_size) std::string().swap(pending_);
    }
    // Hold the replies while a value is incomplete, as memcached does (see
    // parser::awaiting_data): a multi-get with a bad key culls those not sent.
    if (!parser_.awaiting_data() && !flush(conn)) {
      reason = "error";
      break;
    }
  }
  if (action != flow::exec_action::Continue) flush(conn);
  if (action == flow::exec_action::Close) reason = server_.quit ? "normal" : "error";
  if (action == flow::exec_action::Shutdown) reason = "shutdown";
  return action;
}

// memcached's close reason for a read that ended the connection.
std::string_view client::close_reason(ssize_t n, mm::millis idle) {
  if (n == 0) return "normal";
  if (n == -ECANCELED) return "shutdown";
  if (n == -ETIMEDOUT && idle != mm::kForever && !mm::tcp_closed(conn_->fd())) return "idle_timeout";
  return "error";
}

// A busy client keeps the request slots of its last batches (a pipeline of
// routed requests would otherwise allocate and free them every batch); once
// it has been quiet for kTrimAfterMs it gives all but one back, so an idle
// connection holds little.
ssize_t client::read_some(stream& conn, char* buf, size_t len, mm::millis idle) {
  if (inflight_.allocated() > flow::inflight_queue::kKeepSlots &&
      (idle == mm::kForever || idle > kTrimAfterMs)) {
    ssize_t n = conn.read(buf, len, kTrimAfterMs);
    if (n != -ETIMEDOUT) return n;
    inflight_.trim();
    if (idle != mm::kForever) idle -= kTrimAfterMs;
  }
  return conn.read(buf, len, idle);
}

// The executor only ever appends to this client's out_.
bool client::drain(protocol::out_buffer& out) { return &out == &out_ && conn_ && flush(*conn_); }

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
