#include "role_monitor.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace ithaca::server {

namespace {
// yrmcds looks for the address every 100 ms after losing its master.
constexpr mm::millis kLostPoll = 100;
constexpr mm::millis kSessionJoin = 5000;  // a cancelled session ends at its next wait
}  // namespace

const char* to_string(role_state s) {
  switch (s) {
    case role_state::Master: return "master";
    case role_state::MasterLost: return "slave (master lost)";
    case role_state::Slave: break;
  }
  return "slave";
}

role_state first_role_of(const role_settings& s, replication::repl_counters& counters) {
  std::string error;
  const replication::vip_holding h = replication::holds_address(s.virtual_ip, &error);
  if (h == replication::vip_holding::Unknown)
    spdlog::error("replication: cannot tell who holds virtual_ip {}: {}", s.virtual_ip.text, error);
  const role_state first = h == replication::vip_holding::Yes ? role_state::Master : role_state::Slave;
  counters.role.store(to_string(first));
  spdlog::warn("replication: virtual_ip {} is {}here: starting as {} (role: auto)", s.virtual_ip.text,
               first == role_state::Master ? "" : "not ", to_string(first));
  return first;
}

role_monitor::role_monitor(role_settings settings, role_state first, replication::fanout& r, store::store& st,
                           const server_clock& clock, replication::repl_counters& counters, served_role& role,
                           live_cell& live)
    : settings_(std::move(settings)),
      fanout_(r),
      store_(st),
      clock_(clock),
      counters_(counters),
      role_(role),
      live_(live),
      state_(first) {}

bool role_monitor::start(const mm::machine_config& base) {
  mm::machine_config cfg = base;
  cfg.name = "role";
  machine_ = mm::machine_create(cfg, [this] { main(); });
  return machine_ != nullptr;
}

void role_monitor::stop() {
  if (machine_) mm::machine_stop(machine_);
}

void role_monitor::join() {
  if (machine_) mm::machine_join(machine_);
  machine_ = nullptr;
}

replication::vip_holding role_monitor::holds() {
  std::string error;
  const replication::vip_holding h = replication::holds_address(settings_.virtual_ip, &error);
  if (h == replication::vip_holding::Unknown) {
    if (!check_failed_)
      spdlog::error("replication: cannot tell who holds virtual_ip {}: {}; the role stays", settings_.virtual_ip.text,
                    error);
    check_failed_ = true;
  } else {
    check_failed_ = false;
  }
  return h;
}

// The one switch that drives the roles (see role_monitor.h). Every wait is
// bounded (check_interval, 100 ms) and ends at once on cancellation (shutdown).
void role_monitor::main() {
  if (state_ != role_state::Master) start_session();
  const auto check = static_cast<mm::millis>(settings_.check_interval_ms);
  for (;;) {
    switch (state_) {
      case role_state::Master:
        if (mm::sleep(check) == mm::wait_status::Cancelled) return end_session();
        if (holds() == replication::vip_holding::No) demote();
        break;
      case role_state::Slave:
        // A session that ends signals; otherwise look at the address again.
        if (!session_ended_ && session_done_.wait(check) == mm::wait_status::Cancelled) return end_session();
        if (holds() == replication::vip_holding::Yes) {
          promote();
        } else if (session_ended_) {
          end_session();
          lost_at_ns_ = mm::now_ns();
          state_ = role_state::MasterLost;
          spdlog::info("replication: no master at {}:{}; looking for virtual_ip here for up to {} ms",
                       settings_.slave.master_host, settings_.slave.master_port, settings_.failover_delay_ms);
        }
        break;
      case role_state::MasterLost:
        if (mm::sleep(std::min(kLostPoll, check)) == mm::wait_status::Cancelled) return;
        if (holds() == replication::vip_holding::Yes) {
          promote();
        } else if (static_cast<uint64_t>(mm::now_ns() - lost_at_ns_) / 1000000 >= settings_.failover_delay_ms) {
          // yrmcds: "Could not promote to master. Join the cluster again as a slave."
          store_.flush_all(clock_.now(), 0);
          spdlog::info(
              "replication: virtual_ip {} did not come here within {} ms: local data forgotten, "
              "following {}:{} again",
              settings_.virtual_ip.text, settings_.failover_delay_ms, settings_.slave.master_host,
              settings_.slave.master_port);
          state_ = role_state::Slave;
          start_session();
        }
        break;
    }
  }
}

// Slave or MasterLost -> Master. The data stays: it is what the old master
// streamed (yrmcds keeps it too).
void role_monitor::promote() {
  end_session();
  if (!fanout_.start(settings_.machine)) {
    // The address is here but slaves cannot be accepted (the port is taken?):
    // stay a slave and try again at the next check.
    spdlog::error(
        "replication: virtual_ip {} is here but the fan-out machine did not start (see above); "
        "trying again in {} ms",
        settings_.virtual_ip.text, settings_.check_interval_ms);
    if (state_ == role_state::Slave) start_session();
    return;
  }
  // Expiry is this node's own again before it takes a write: what passed its
  // deadline while the old master had not yet said so is reclaimed by the GC
  // (and streamed to the new slaves as a DeleteQ).
  store_.set_expiry_by_master(false);
  role_.change(route::store_access::ReadWrite, live_);
  changed(role_state::Master, "promoted to master: serving writes and accepting slaves");
}

// Master -> Slave. Clients first (no write is taken once their next batch
// sees the new tree), then the slaves (they fail over to whoever holds the
// address), then the data, as yrmcds's restart would drop it.
void role_monitor::demote() {
  role_.change(settings_.slave_access, live_);
  fanout_.stop();
  fanout_.join();
  store_.flush_all(clock_.now(), 0);
  changed(role_state::Slave, "demoted to slave: local data dropped");
  start_session();
}

void role_monitor::changed(role_state to, const char* what) {
  spdlog::warn("replication: virtual_ip {} is {}here: {} (was {}); clients: {}", settings_.virtual_ip.text,
               to == role_state::Master ? "" : "not ", what, to_string(state_), route::to_string(role_.access()));
  state_ = to;
  counters_.role.store(to == role_state::Master ? "master" : "slave");
  counters_.role_changes.fetch_add(1, std::memory_order_relaxed);
}

// The session ends only once it has followed a master and lost it. Until it
// connects it tries again every reconnect_delay: a node that never reached a
// master has nothing to keep (a demoted master dropped its data; the session
// forgets again at connect), so waiting failover_delay in MasterLost would
// only keep it from following a new master that is still starting. Under
// `ack: slave` that wait is an outage: the new master acknowledges no write
// before a slave has synced. Meanwhile the monitor looks at the address every
// check_interval and cancels this coroutine to promote.
void role_monitor::start_session() {
  session_ended_ = false;
  session_ = mm::coroutine_create("repl slave", [this] {
    const auto retry = static_cast<mm::millis>(settings_.slave.reconnect_delay_ms);
    while (!replication::slave_session(
        settings_.slave, store_, [this] { return clock_.now(); }, counters_, &session_logged_failure_)) {
      if (mm::sleep(retry) == mm::wait_status::Cancelled) break;
    }
    session_ended_ = true;
    session_done_.signal();
  });
}

// Cancels the session (if it still runs) and waits for it to end.
void role_monitor::end_session() {
  if (session_ == 0) return;
  // It uses this monitor's state: it must end first, also at a shutdown
  // (which cancels this coroutine too).
  if (!mm::coroutine_finish(session_, kSessionJoin))
    spdlog::error("replication: the slave session did not end within {} ms", kSessionJoin);
  session_ = 0;
  // A signal the ended session left in session_done_ only makes the next
  // Slave wait return early once (it then looks at the address again).
  session_ended_ = false;
}

}  // namespace ithaca::server
