#include "fanout.h"

#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "fanout_slave.h"
#include "tls_conn.h"

namespace ithaca::replication {

namespace {
constexpr size_t kMaxSlaves = 16;                        // yrmcds allows 5
constexpr int64_t kRefusalLogPeriodNs = 10'000'000'000;  // at most one "peer refused" line per 10 s
constexpr mm::millis kHandshakeTimeout = 5000;           // replication.tls: a peer's whole handshake
}  // namespace

fanout::fanout(fanout_settings settings, store::store& st, std::function<store::store_now()> now, int64_t wall_base,
               repl_counters& counters, ack_state* ack)
    : settings_(std::move(settings)),
      store_(st),
      now_(std::move(now)),
      counters_(counters),
      ack_(ack),
      queue_(settings_.queue_size),
      observer_(queue_, wall_base, ack ? ack->confirmed() : 0) {
  counters_.role.store("master");
}

fanout::~fanout() = default;

bool fanout::start(const mm::machine_config& base) {
  mm::machine_config cfg = base;
  cfg.name = "repl_fanout";
  std::promise<bool> bound;
  auto result = bound.get_future();
  machine_ = mm::machine_create(cfg, [this, &bound] { main(&bound); });
  if (!machine_) return false;
  if (!result.get()) {
    join();
    return false;
  }
  return true;
}

void fanout::stop() {
  if (machine_) mm::machine_stop(machine_);
}

void fanout::join() {
  if (machine_) mm::machine_join(machine_);
  machine_ = nullptr;
}

// The fan-out machine's main coroutine: binds replication.listen (telling
// `bound`, on which fanout::start waits), starts the drain, then accepts
// slaves until cancelled: a peer outside replication.allow, or past 16
// slaves, is closed before a byte is sent; an accepted one gets `streaming`
// set before its scan starts (the yrmcds race, INTERNALS "Replication") and
// three coroutines: heartbeats, writer, sync. [the repl_fanout thread; no
// lock; store bucket locks only inside the scan] On cancel it ends the drain
// and drops every slave before the listener goes.
void fanout::main(std::promise<bool>* bound) {
  discard_stale();
  if (settings_.listen.empty()) {
    // Takeover only (no replication configured): no slave listener; the
    // pooler's takeover coroutine attaches the one slave (attach_takeover).
    bound->set_value(true);
    mm::coroutine_id drainer = mm::coroutine_create("repl drain", [this] { drain(); });
    mm::sleep(mm::kForever);  // until the machine is stopped (cancelled)
    mm::coroutine_finish(drainer, 5000);
    for (const slave_ptr& s : std::vector<slave_ptr>(slaves_)) drop(s, "shutting down");
    discard_stale();
    return;
  }
  mm::address addr;
  std::string error;
  std::unique_ptr<mm::io> listener;
  if (mm::address::parse(settings_.listen, addr, &error)) listener = mm::listen(addr, 64, false, &error);
  if (!listener) {
    spdlog::error("replication: listen {}: {}", settings_.listen, error);
    bound->set_value(false);
    mm::machine_stop(mm::machine_self());
    return;
  }
  // Tests read this line to learn the port bound for port 0 (warn passes the default level).
  spdlog::warn("replication: accepting slaves on {}", mm::local_address(listener->fd()).to_string());
  bound->set_value(true);
  mm::coroutine_id drainer = mm::coroutine_create("repl drain", [this] { drain(); });
  for (;;) {
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof peer;
    int fd = listener->accept(mm::kForever, &peer, &peer_len);
    if (fd == -ECANCELED) break;
    if (fd < 0) {
      spdlog::warn("replication: accept: {}", std::strerror(-fd));
      if (mm::sleep(10) == mm::wait_status::Cancelled) break;
      continue;
    }
    mm::address pa;
    pa.storage = peer;
    pa.length = peer_len;
    // Before anything is sent: a stranger gets no item, no slot, no buffer.
    if (!allowed(peer)) {
      refuse(fd, pa.to_string(), "not in replication.allow");
      continue;
    }
    if (slaves_.size() >= kMaxSlaves) {
      refuse(fd, pa.to_string(), "already " + std::to_string(kMaxSlaves) + " slaves");
      continue;
    }
    if (settings_.tls_ctx) {
      // Bounded like the slots: a peer stalling in its handshake holds one.
      if (handshaking_ >= kMaxSlaves) {
        refuse(fd, pa.to_string(), "already " + std::to_string(kMaxSlaves) + " TLS handshakes in progress");
        continue;
      }
      ++handshaking_;
      mm::coroutine_create("repl tls handshake", [this, fd, peer = pa.to_string()] { handshake(fd, peer); });
      continue;
    }
    std::unique_ptr<mm::io> io = mm::io::attach(fd);
    if (!io) {
      ::close(fd);
      continue;
    }
    attach(std::move(io), nullptr, pa.to_string());
  }
  // Shutdown: every coroutine here was cancelled; let them end before the
  // listener and the slave list go.
  mm::coroutine_finish(drainer, 5000);
  for (const slave_ptr& s : std::vector<slave_ptr>(slaves_)) drop(s, "shutting down");
  discard_stale();
}

// replication.tls: a peer becomes a slave only once it has shown a
// certificate that chains to the CA (make_mutual_server_ctx requires one);
// a plaintext peer, a wrong certificate or none fails the handshake and is
// closed having been sent no item. [fan-out machine; its own coroutine,
// at most kHandshakeTimeout]
void fanout::handshake(int fd, std::string peer) {
  struct counted {
    unsigned& n;
    ~counted() { --n; }
  } slot{handshaking_};
  std::unique_ptr<mm::io> io = mm::io::attach(fd);
  if (!io) {
    ::close(fd);
    return;
  }
  std::string why;
  std::unique_ptr<net::tls_conn> tls =
      net::tls_conn::accept(*io, settings_.tls_ctx.get(), mm::deadline_after(kHandshakeTimeout), &why);
  if (!tls) {
    if (why == "cancelled") return;
    counters_.tls_refused.fetch_add(1, std::memory_order_relaxed);
    io->close();
    refuse(-1, peer, "replication.tls: " + why);
    return;
  }
  if (slaves_.size() >= kMaxSlaves) {
    tls.reset();
    io->close();
    refuse(-1, peer, "already " + std::to_string(kMaxSlaves) + " slaves");
    return;
  }
  spdlog::info("replication: slave {} shows {} ({}{})", peer, tls->peer_subject(), tls->version(),
               tls->kernel_send() ? ", kernel TLS sends" : "");
  attach(std::move(io), std::move(tls), peer);
}

// A peer that passed every check becomes a slave: `streaming` is set before
// its scan starts (the yrmcds race, INTERNALS "Replication") and it gets
// three coroutines: heartbeats, writer, sync. [fan-out machine]
void fanout::attach(std::unique_ptr<mm::io> io, std::unique_ptr<net::tls_conn> tls, const std::string& peer,
                    std::shared_ptr<takeover_link> link) {
  auto s = std::make_shared<slave>(log_.end());  // the stream from here on
  s->io = std::move(io);
  s->tls = std::move(tls);
  s->peer = peer;
  if (!link) mm::set_nodelay(s->io->fd(), true);  // a takeover's is a unix socket
  s->id = ++next_id_;
  if (link) link->id.store(s->id);
  s->takeover = std::move(link);
  s->joined_ns = mm::now_ns();
  slaves_.push_back(s);
  counters_.slaves.store(slaves_.size(), std::memory_order_relaxed);
  counters_.slaves_joined.fetch_add(1, std::memory_order_relaxed);
  // Before the scan starts: every change made to a bucket after the scan
  // copied it is streamed (the flag is read under that bucket's lock).
  observer_.set_streaming(true);
  spdlog::info("replication: slave {} joined (id {}); initial sync starts", s->peer, s->id);
  s->reader = mm::coroutine_create("repl heartbeats", [this, s] { heartbeats(s); });
  s->writer = mm::coroutine_create("repl writer", [this, s] { writer(s); });
  s->scan = mm::coroutine_create("repl sync", [this, s] { initial_sync(s); });
  room_.signal();  // a paced drain: the fastest slave is now this one, with nothing to send
}

// The pooler's takeover coroutine hands the socket over; it is attached
// here, on the machine that will own it. [any thread; the attach runs on the
// fan-out machine]
void fanout::attach_takeover(int fd, std::shared_ptr<takeover_link> link) {
  mm::machine_spawn(machine_, "repl takeover", [this, fd, link] {
    std::unique_ptr<mm::io> io = mm::io::attach(fd);
    if (!io) {
      ::close(fd);
      link->dropped.store(true);
      return;
    }
    attach(std::move(io), nullptr, "takeover", link);
  });
}

bool fanout::allowed(const sockaddr_storage& peer) const {
  if (settings_.allow.empty()) return true;
  for (const config::cidr& block : settings_.allow) {
    if (config::cidr_contains(block, peer)) return true;
  }
  return false;
}

// Closes a peer the accept loop will not serve and counts it. One log line
// per 10 s at most (with the count of those not logged since), so a peer
// that reconnects in a loop cannot flood the log.
void fanout::refuse(int fd, const std::string& peer, const std::string& why) {
  if (fd >= 0) ::close(fd);  // -1: closed by the caller (a TLS peer's io)
  counters_.peers_refused.fetch_add(1, std::memory_order_relaxed);
  const int64_t now = mm::now_ns();
  if (refusal_logged_ns_ != 0 && now - refusal_logged_ns_ < kRefusalLogPeriodNs) {
    refusals_unlogged_++;
    return;
  }
  if (refusals_unlogged_ > 0) {
    spdlog::warn("replication: peer {} refused: {} ({} more refused since the last such line)", peer, why,
                 refusals_unlogged_);
  } else {
    spdlog::warn("replication: peer {} refused: {}", peer, why);
  }
  refusal_logged_ns_ = now;
  refusals_unlogged_ = 0;
}

// `s` by value: a caller may pass the very element of slaves_ erased here.
void fanout::drop(slave_ptr s, const std::string& why) {
  if (s->closed) return;
  s->closed = true;
  std::erase(slaves_, s);
  counters_.slaves.store(slaves_.size(), std::memory_order_relaxed);
  counters_.slaves_dropped.fetch_add(1, std::memory_order_relaxed);
  if (slaves_.empty()) observer_.set_streaming(false);
  if (s->takeover) {
    // The new process closes it at the end mark: that is the normal end.
    s->takeover->dropped.store(true);
    spdlog::info("replication: the takeover's stream ended: {}", why);
  } else {
    spdlog::warn("replication: slave {} dropped: {}", s->peer, why);
  }
  // The coroutines end at their next wait; the last one holding `s` closes
  // the socket (on this machine, which owns it).
  // A write in progress keeps the log blocks it pinned.
  for (mm::coroutine_id id : {s->reader, s->writer, s->scan}) {
    if (id && id != mm::coroutine_self()) mm::coroutine_cancel(id);
  }
  room_.signal();  // a paced drain may have waited for this slave
  update_lag();
}

}  // namespace ithaca::replication
