#include "fanout.h"

#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "ack_reader.h"
#include "large_value.h"
#include "record.h"
#include "ring_record.h"
#include "tls_conn.h"

namespace ithaca::replication {

namespace {
constexpr size_t kMaxSlaves = 16;                // yrmcds allows 5
constexpr size_t kDrainBatch = 4 << 20;          // bytes drained before the writers are woken
constexpr uint64_t kScanStep = 1024;             // buckets per scan call (one lock at a time)
constexpr mm::millis kIdleWait = 1000;           // drain and writer waits (then look again)
constexpr mm::millis kLinger = 1;                // the drain's poll period while records keep coming
constexpr int64_t kRefusalLogPeriodNs = 10'000'000'000;  // at most one "peer refused" line per 10 s
constexpr mm::millis kHandshakeTimeout = 5000;           // replication.tls: a peer's whole handshake
}  // namespace

// One attached slave. Fan-out machine only.
struct fanout::slave {
  uint32_t id = 0;
  std::string peer;
  std::unique_ptr<mm::io> io;
  // replication.tls: the session on io; the writer writes and the heartbeat
  // reader reads through it at once (net/tls_conn.h). Freed before io.
  std::unique_ptr<net::tls_conn> tls;
  std::string pending;  // drain appends
  std::string sending;  // the writer's current write
  mm::cond ready;       // drain -> writer: pending has bytes
  bool syncing = true;  // initial sync not finished
  bool closed = false;
  uint64_t synced = 0;  // items received from the initial sync
  uint64_t asked = 0;      // the last position it was asked to confirm (ack: slave)
  uint64_t confirmed = 0;  // the highest position it confirmed
  int64_t joined_ns = 0;
  mm::coroutine_id reader = 0, writer = 0, scan = 0;
  size_t buffered() const { return pending.size() + sending.size(); }
  ssize_t read(void* buf, size_t len, mm::millis timeout) {
    return tls ? tls->read(buf, len, timeout) : io->read(buf, len, timeout);
  }
  ssize_t write(const void* buf, size_t len, mm::millis timeout) {
    return tls ? tls->write(buf, len, timeout) : io->write(buf, len, timeout);
  }
  ~slave() { tls.reset(); }
};

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
void fanout::attach(std::unique_ptr<mm::io> io, std::unique_ptr<net::tls_conn> tls, const std::string& peer) {
  auto s = std::make_shared<slave>();
  s->io = std::move(io);
  s->tls = std::move(tls);
  s->peer = peer;
  mm::set_nodelay(s->io->fd(), true);
  s->id = ++next_id_;
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

// Between two terms of a master (roles by virtual IP) nobody drains the ring;
// what is left in it (records of workers that read `streaming` just before
// the last slave was dropped) is discarded at the end of a term and again at
// the start of the next, before any slave can join: a new slave must not
// apply stale records after its scan. With no slave attached, deliver() only
// releases a large value's reference. [fan-out machine; the only consumer]
void fanout::discard_stale() {
  std::string_view record;
  while (queue_.try_peek(record)) {
    deliver(record);
    queue_.pop();
  }
}

// The ring's only consumer. A record that names a large value holds one
// reference on it, released here whether or not a slave takes it.
void fanout::drain() {
  mm::byte_queue::reader reader(queue_);
  uint64_t lost_seen = observer_.lost();
  for (;;) {
    mm::wait_status w = reader.wait(kIdleWait);
    if (w == mm::wait_status::Cancelled) return;
    if (uint64_t lost = observer_.lost(); lost != lost_seen) {
      counters_.queue_overflows.fetch_add(lost - lost_seen, std::memory_order_relaxed);
      lost_seen = lost;
      for (const slave_ptr& s : std::vector<slave_ptr>(slaves_))
        drop(s, "the replication queue overflowed (" + std::to_string(lost) + " records lost so far)");
    }
    size_t batch = 0;
    std::string_view record;
    while (batch < kDrainBatch && queue_.try_peek(record)) {
      deliver(record);
      batch += record.size();
      queue_.pop();
      if (mm::coroutine_cancelled()) return;
    }
    targets_.clear();  // no dropped slave kept open by it
    ask_confirmations();
    for (const slave_ptr& s : slaves_) {
      if (!s->pending.empty()) s->ready.signal();
    }
    update_lag();
    if (batch >= kDrainBatch) {
      mm::yield();  // let the writers and scans run
      continue;
    }
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
    if (batch > 0 && !slaves_.empty() && !acks_waiting && mm::sleep(kLinger) == mm::wait_status::Cancelled) return;
  }
}

void fanout::deliver(std::string_view record) {
  const ring_tag tag = read_tag(record);
  const std::string_view packet = packet_of(record);
  store::large_value_ref large(tag.large ? tag.value : nullptr);  // adopts the record's reference
  std::vector<slave_ptr>& targets = targets_;  // a copy of the list: append may drop a slave
  targets.clear();
  switch (tag.kind) {
    case ring_kind::Stream:
      counters_.records_sent.fetch_add(slaves_.size(), std::memory_order_relaxed);
      if (!large) {
        // The common record: straight to every slave, no copy of the list
        // (two atomic reference counts per slave per record). A slave that
        // append() drops leaves slaves_, and the next one takes its index.
        for (size_t i = 0; i < slaves_.size();) {
          const size_t before = slaves_.size();
          append(slaves_[i], packet);
          if (slaves_.size() == before) ++i;
        }
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
      break;
    case ring_kind::SyncDone:
      for (const slave_ptr& s : slaves_) {
        if (s->id != tag.sync_id) continue;
        s->syncing = false;
        counters_.syncs_done.fetch_add(1, std::memory_order_relaxed);
        spdlog::info("replication: initial sync of slave {} done: {} items in {} ms", s->peer, s->synced,
                     (mm::now_ns() - s->joined_ns) / 1000000);
      }
      return;
  }
  if (targets.empty()) return;
  if (!large) {
    for (const slave_ptr& s : targets) append(s, packet);
    return;
  }
  // A value in a file: read it off every lock, on the blocking pool (the
  // drain waits for it, which keeps the records in order).
  auto value = std::make_shared<std::string>();
  auto ok = std::make_shared<bool>(false);
  store::large_value_ref ref = large;
  if (mm::blocking_call([ref, value, ok] { *ok = ref.read_all(*value); }, 60000) != mm::wait_status::Ok ||
      !*ok) {
    for (const slave_ptr& s : targets) drop(s, "could not read a large value to replicate");
    return;
  }
  for (const slave_ptr& s : targets) append(s, packet, *value);
}

void fanout::append(const slave_ptr& s, std::string_view a, std::string_view b) {
  if (s->closed) return;
  if (s->buffered() > 0 && s->buffered() + a.size() + b.size() > settings_.send_buffer) {
    drop(s, "fell behind by more than send_buffer (" + std::to_string(settings_.send_buffer) + " bytes)");
    return;
  }
  s->pending.append(a);
  s->pending.append(b);
}

void fanout::writer(slave_ptr s) {
  for (;;) {
    if (s->pending.empty()) {
      if (s->ready.wait(kIdleWait) == mm::wait_status::Cancelled) return;
      continue;
    }
    std::swap(s->pending, s->sending);
    ssize_t n = s->write(s->sending.data(), s->sending.size(), static_cast<mm::millis>(settings_.slave_timeout_ms));
    if (n == -ECANCELED) return;
    if (n < 0) {
      drop(s, n == -ETIMEDOUT ? "not reading (write timed out)" : std::string("write: ") + std::strerror(static_cast<int>(-n)));
      return;
    }
    counters_.bytes_sent.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    s->sending.clear();
    if (s->sending.capacity() > settings_.send_buffer) std::string().swap(s->sending);
  }
}

// While client writes wait for a confirmation (ack: slave), asks every
// synced slave to confirm the position the drain has reached: every record
// before it is in the slave's buffer, ahead of the request.
void fanout::ask_confirmations() {
  if (!ack_ || ack_->waiting.load(std::memory_order_seq_cst) == 0) return;
  const uint64_t position = observer_.read_position();
  char request[kAckSize];
  encode_ack_request(request, position);
  for (const slave_ptr& s : std::vector<slave_ptr>(slaves_)) {
    if (s->syncing || s->asked >= position) continue;
    append(s, {request, sizeof request});  // may drop it (behind by send_buffer)
    s->asked = position;
    counters_.ack_requests.fetch_add(1, std::memory_order_relaxed);
  }
}

// A slave sends one byte every heartbeat interval (yrmcds: '\0'), which
// means nothing else, and (ack: slave) its confirmations. Silence for
// slave_timeout, the end of the stream, or a packet that is not a
// confirmation drops it.
void fanout::heartbeats(slave_ptr s) {
  char buf[512];
  ack_reader reader;
  for (;;) {
    ssize_t n = s->read(buf, sizeof buf, static_cast<mm::millis>(settings_.slave_timeout_ms));
    if (n > 0) {
      uint64_t confirmed = s->confirmed;
      if (reader.feed({buf, static_cast<size_t>(n)}, confirmed) != ack_reader::status::Ok) {
        drop(s, reader.error());
        return;
      }
      if (confirmed == s->confirmed) continue;
      if (confirmed > s->asked) {
        drop(s, "confirmed position " + std::to_string(confirmed) + ", which it was never asked for");
        return;
      }
      s->confirmed = confirmed;
      if (ack_) ack_->confirm(confirmed);
      continue;
    }
    if (n == -ECANCELED) return;
    drop(s, n == 0              ? "closed the connection"
            : n == -ETIMEDOUT   ? "no heartbeat for " + std::to_string(settings_.slave_timeout_ms) + " ms"
                                : std::string("read: ") + std::strerror(static_cast<int>(-n)));
    return;
  }
}

// Copies every live item to slave `s` through the ring, one bucket lock at a
// time (store::scan holds it while the observer writes that bucket's
// records), while clients keep being served. Throttled so the ring keeps room
// for the workers' records and the slave's buffer does not overflow: what the
// ring holds counts as the slave's (it may all be its sync records, moved to
// its buffer at the drain's next pass), so buffer + ring stay under half of
// send_buffer before each step, whatever the ring's size.
void fanout::initial_sync(slave_ptr s) {
  uint64_t next = 0;
  bool refused = false;
  auto visit = [this, &s, &refused](const store::item_view& v) {
    if (!refused && !observer_.sync_item(v, s->id)) refused = true;
  };
  store::store::scan_visitor visitor(visit);
  do {
    while (queue_.used() > queue_.capacity() / 4 || s->buffered() + queue_.used() > settings_.send_buffer / 2) {
      if (mm::sleep(1) == mm::wait_status::Cancelled || s->closed) return;
    }
    next = store_.scan(next, kScanStep, now_(), visitor);
    if (refused) {
      drop(s, "the replication queue was full during the initial sync");
      return;
    }
    mm::yield();
    if (mm::coroutine_cancelled() || s->closed) return;
  } while (next != 0);
  while (!observer_.sync_done(s->id)) {
    if (mm::sleep(1) == mm::wait_status::Cancelled || s->closed) return;
  }
}

// `s` by value: a caller may pass the very element of slaves_ erased here.
void fanout::drop(slave_ptr s, const std::string& why) {
  if (s->closed) return;
  s->closed = true;
  std::erase(slaves_, s);
  counters_.slaves.store(slaves_.size(), std::memory_order_relaxed);
  counters_.slaves_dropped.fetch_add(1, std::memory_order_relaxed);
  if (slaves_.empty()) observer_.set_streaming(false);
  spdlog::warn("replication: slave {} dropped: {}", s->peer, why);
  // The coroutines end at their next wait; the last one holding `s` closes
  // the socket (on this machine, which owns it).
  for (mm::coroutine_id id : {s->reader, s->writer, s->scan}) {
    if (id && id != mm::coroutine_self()) mm::coroutine_cancel(id);
  }
  update_lag();
}

void fanout::update_lag() {
  uint64_t lag = 0;
  for (const slave_ptr& s : slaves_) lag += s->buffered();
  counters_.lag_bytes.store(lag, std::memory_order_relaxed);
}

}  // namespace ithaca::replication
