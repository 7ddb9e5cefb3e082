#include "worker.h"

#include <algorithm>

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "ack_waiters.h"
#include "client.h"
#include "udp_server.h"
#include "async_runner.h"
#include "worker_backends.h"

namespace ithaca::server {

worker::worker(int index, worker_shared shared, stats::command_counters& counters)
    : index_(index),
      shared_(std::move(shared)),
      counters_(counters),
      backends_(std::make_unique<proxy::worker_backends>(static_cast<unsigned>(index))) {
  shared_.backends = backends_.get();
  async_ = std::make_unique<route::async_runner>(backends_.get());
  shared_.async = async_.get();
  // A reply may carry what a client may send through a tree that only
  // passes values to servers (router.max_value_size), or the store's
  // item_size_max if larger; the store refuses its own too-large fills.
  // One acquire load per call (snapshot_reader::refresh), once per read.
  if (shared_.live != nullptr) {
    backends_->set_max_value_source([r = live_reader(*shared_.live)]() mutable {
      r.refresh();
      return std::max(r->item_size_max, r->max_value_size);
    });
  } else if (store::store* st = shared_.store) {
    backends_->set_max_value_source([st] { return st->item_size_max(); });
  }
  if (shared_.ack_state) {
    acks_ = std::make_unique<route::ack_waiters>(*shared_.ack_state, static_cast<unsigned>(index));
    shared_.acks = acks_.get();
  }
}

worker::~worker() {
  for (const udp_socket& s : udp_) ::close(s.fd);
  for (const udp_socket& s : udp_kept_) ::close(s.fd);
}

bool worker::start(const mm::machine_config& base) {
  mm::machine_config cfg = base;
  cfg.name = "worker" + std::to_string(index_);
  machine_ = mm::machine_create(cfg, [this] { main(); });
  return machine_ != nullptr;
}

// Once only: the pooler's shutdown stops every worker and instance_run stops
// them again on its way out; by then a worker's machine may have ended, and
// posting to an ended machine (its backend is gone) crashed the process.
void worker::stop() {
  if (machine_ && !stop_sent_.exchange(true)) mm::machine_stop(machine_);
}

void worker::join() {
  if (machine_) mm::machine_join(machine_);
  machine_ = nullptr;
}

mm::machine_counters worker::runtime() const {
  return machine_ ? mm::machine_counters_get(machine_) : mm::machine_counters{};
}

const char* worker::backend_name() const { return machine_ ? mm::machine_backend_name(machine_) : "none"; }

void worker::serve_udp(udp_socket s) {
  mm::machine_spawn(machine_, "udp " + s.local, [this, s] { run_udp(s); });
}

// [worker machine]
void worker::run_udp(udp_socket s) {
  const int kept = ::fcntl(s.fd, F_DUPFD_CLOEXEC, 0);
  if (kept >= 0) udp_kept_.push_back(udp_socket{kept, s.local});
  udp_ids_.push_back(mm::coroutine_create("udp " + s.local, [this, s] {
    udp_server server(shared_, counters_);
    server.run(s);
    std::erase(udp_ids_, mm::coroutine_self());
  }));
}

void worker::pause(std::shared_ptr<mm::channel<int>> done) {
  mm::machine_spawn(machine_, "pause", [this, done] { pause_main(done); });
}

// The pause's bound per step: a session ends at its next wait once cancelled.
constexpr mm::millis kPauseStepMs = 5000;

// [worker machine] Cancels and waits for the UDP and session coroutines
// (each session closes the connection it serves after its batch), closes
// the connections still parked or queued, then reports.
void worker::pause_main(const std::shared_ptr<mm::channel<int>>& done) {
  pausing_ = mm::coroutine_self();
  paused_ = true;
  bool ended = true;
  std::vector<mm::coroutine_id> ids = udp_ids_;
  ids.insert(ids.end(), session_ids_.begin(), session_ids_.end());
  for (mm::coroutine_id id : ids) mm::coroutine_cancel(id);
  for (mm::coroutine_id id : ids) ended = mm::coroutine_finish(id, kPauseStepMs) && ended;
  for (mm::park_set::entry* e : parked_.drain()) {
    std::unique_ptr<connection> c(static_cast<connection*>(e));
    close_connection(shared_, *c, "takeover");
  }
  pausing_ = 0;
  if (ended) (void)done->try_write(index_);
}

// [any thread] Posts the resume to the machine; it waits for a pause still
// running first (the pooler's wait for it may have timed out).
void worker::resume() {
  mm::machine_spawn(machine_, "resume", [this] {
    if (pausing_ != 0) (void)mm::coroutine_join(pausing_, kPauseStepMs);
    paused_ = false;
    std::vector<udp_socket> kept = std::move(udp_kept_);
    udp_kept_.clear();
    for (const udp_socket& k : kept) {
      run_udp(k);  // keeps a new duplicate; the coroutine owns this one
    }
    if (sessions_short()) short_.signal();
  });
}

// Runs on the worker machine: waits for sockets until the machine is stopped
// (the wait is cancelled then).
void worker::main() {
  for (udp_socket& s : udp_) run_udp(s);
  udp_.clear();  // the coroutines own the fds now
  if (acks_) mm::coroutine_create("ack waiters", [this] { acks_->run(); });
  mm::coroutine_create("async", [this] { async_->run(); });
  // Reliable deletes: answers the deletes parked until the spool machine
  // wrote their record (proxy/spool_waits.h).
  mm::coroutine_create("spool waits", [this] { backends_->spool_waiting().run(); });
  // Closes the connections to servers a reload removed, once idle.
  mm::coroutine_create("backend sweeper", [this] {
    while (mm::sleep(1000) != mm::wait_status::Cancelled) backends_->sweep();
  });
  // twemproxy's preconnect: the pools that ask for it, at start-up only.
  if (const auto tree = shared_.live->load()->routes) {
    for (const auto& p : tree->pools()) backends_->preconnect(*p);
  }
  parked_.on_queued = [this] {
    if (sessions_short()) short_.signal();
  };
  mm::coroutine_create("idle timeouts", [this] { parked_.run_timeouts(); });
  mm::coroutine_create("session spawner", [this] { run_spawner(); });
  for (;;) {
    accepted_socket s;
    if (inbox_.read(s, mm::kForever) != mm::wait_status::Ok) break;
    shared_.conns->reserved.fetch_sub(1);
    // Queued at once: its first bytes may be there already. Paused (a
    // takeover): the connection is queued and the pause closes it, as it
    // closes every other.
    if (std::unique_ptr<connection> c = open_connection(shared_, std::move(s))) parked_.queue(*c.release());
    if (paused_) {
      for (mm::park_set::entry* e : parked_.drain()) {
        std::unique_ptr<connection> c(static_cast<connection*>(e));
        close_connection(shared_, *c, "takeover");
      }
    }
  }
  // Stopping: every session is cancelled and closes the connection it
  // serves without parking it; the parked and queued ones are closed here.
  for (mm::park_set::entry* e : parked_.drain()) {
    std::unique_ptr<connection> c(static_cast<connection*>(e));
    close_connection(shared_, *c, "shutdown");
  }
  // Sockets still queued when we stop are closed here, by their new owner.
  accepted_socket s;
  while (inbox_.try_read(s)) {
    ::close(s.fd);
    shared_.conns->reserved.fetch_sub(1);
    if (s.listener_clients) s.listener_clients->fetch_sub(1);
  }
}

// Starts sessions while connections wait and none is free, but only as many
// as the work needs: one at once, then another only after a whole turn of the
// ready coroutines in which no session took a connection (all of them wait on
// a backend, a slow reader or a file). A burst of requests the store answers
// at once is served by the sessions there are, each taking the next
// connection after the one it served; a burst of routed requests gets a
// session per request waiting on a backend, up to kMaxSessions.
void worker::run_spawner() {
  for (;;) {
    if (!sessions_short()) {
      if (short_.wait(mm::kForever) == mm::wait_status::Cancelled) return;
      continue;
    }
    bool started = spawn_session();
    uint64_t seen = taken_;
    for (;;) {
      // No stack to be had (memory exhausted): the sessions there are go on;
      // try again a little later rather than at every turn.
      if (!started && mm::sleep(10) == mm::wait_status::Cancelled) return;
      mm::yield();
      if (mm::coroutine_cancelled()) return;
      if (!sessions_short()) break;
      started = taken_ != seen || spawn_session();
      seen = taken_;
    }
  }
}

bool worker::spawn_session() {
  sessions_++;
  available_++;  // until it first runs
  const mm::coroutine_id id = mm::coroutine_create("session", [this] {
    run_session();
    session_ids_.erase(mm::coroutine_self());
  });
  if (id != 0) {
    session_ids_.insert(id);
    return true;
  }
  sessions_--;
  available_--;
  return false;
}

// A pooled session: serves queued connections one after the other; quiet,
// it gives back spare request slots, and ends after kSessionLingerMs if more
// than kKeepSessions are left.
void worker::run_session() {
  client session(shared_, counters_);
  available_--;
  for (;;) {
    // Cancelled (a stop or a pause): the connections still queued are
    // closed by whoever cancelled, not served.
    if (mm::coroutine_cancelled()) break;
    if (mm::park_set::entry* e = parked_.take()) {
      taken_++;
      auto* c = static_cast<connection*>(e);
      if (session.serve(*c, parked_) == client::outcome::Closed) delete c;
      // Others wait: let the loop poll and the other coroutines run first, as
      // each connection's own coroutine once did.
      if (parked_.queued() > 0) mm::yield();
      continue;
    }
    const bool trim = session.holds_spare_slots();
    available_++;
    const mm::wait_status s = parked_.wait(trim ? kTrimAfterMs : kSessionLingerMs);
    available_--;
    if (s == mm::wait_status::Cancelled) break;
    if (s == mm::wait_status::TimedOut) {
      if (trim) {
        session.trim();
      } else if (sessions_ > kKeepSessions) {
        break;
      }
    }
  }
  sessions_--;
}

}  // namespace ithaca::server
