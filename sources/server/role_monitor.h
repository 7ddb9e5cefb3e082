// Roles that follow a virtual IP (replication.role: auto), yrmcds's automatic
// master promotion without its restart: the node that holds virtual_ip on a
// local interface is the master, the others are slaves of virtual_ip:port,
// and a node changes role in process.
//
// The monitor is the main coroutine of the "role" machine, which it shares
// with the slave session it runs while a slave (replication::slave_session).
// It alone starts and stops the fan-out machine after start-up, and it alone
// changes what clients may do (served_role::change, a new live snapshot).
// Starting and joining the fan-out machine block the role machine's thread
// (fanout::start waits for the bind, fanout::join for its slaves to be
// dropped, within 5 s): nothing else runs there at those moments, since the
// slave session has ended before a promotion and starts after a demotion.
//
// State machine (one switch in main()):
//
//   Master --- address gone (check every check_interval) ---> Slave
//            demote: clients read-only or closed, fan-out machine stopped
//            (its slaves drop and fail over), local data dropped (flush),
//            slave session started
//   Slave --- address here (every check_interval) -----------> Master
//            promote: session ended, fan-out machine started (listener,
//            streaming), clients read and write; data kept
//   Slave --- session ended (it followed a master, now gone) -> MasterLost
//            (a session that cannot connect does not end: it tries again
//            every reconnect_delay, see start_session)
//   MasterLost --- address here (looked for every 100 ms) ----> Master (promote)
//   MasterLost --- failover_delay passed ---------------------> Slave
//            local data forgotten, a new session (it reconnects to virtual_ip)
//
// yrmcds does the same with a restart on demotion (upstart brings it back as a
// slave) and looks for the address 50 times 100 ms (5 s) after losing its master.
#pragma once

#include <cstdint>

#include "live_settings.h"
#include "machinarium.h"
#include "repl_counters.h"
#include "route_builder.h"
#include "fanout.h"
#include "served_role.h"
#include "server_clock.h"
#include "slave.h"
#include "store.h"
#include "vip.h"

namespace ithaca::server {

struct role_settings {
  replication::ip_literal virtual_ip;
  uint64_t check_interval_ms = 1000;
  uint64_t failover_delay_ms = 5000;
  route::store_access slave_access = route::store_access::Closed;  // clients of a slave
  replication::slave_settings slave;                               // master_host is virtual_ip
  mm::machine_config machine;                                      // the fan-out machine's, at each promotion
};

enum class role_state : std::uint8_t {
  Master,      // holds virtual_ip: the fan-out machine runs; clients read and write
  Slave,       // does not: a slave session follows virtual_ip:port; clients as slave_access says
  MasterLost,  // a slave whose session ended: looks for the address until failover_delay passes
};
const char* to_string(role_state s);

// The first role: Master if this node holds the address now, else Slave
// (logged, and set in the counters). Called before any machine starts, so the
// first snapshot is right and the caller starts the fan-out machine for a
// Master (a bind failure then fails the start, as with a static master). [main]
role_state first_role_of(const role_settings& s, replication::repl_counters& counters);

class role_monitor {
 public:
  // `first` is first_role_of()'s answer; for a Master the caller has started
  // the fan-out machine.
  role_monitor(role_settings settings, role_state first, replication::fanout& r, store::store& st,
               const server_clock& clock, replication::repl_counters& counters, served_role& role, live_cell& live);
  role_monitor(const role_monitor&) = delete;
  role_monitor& operator=(const role_monitor&) = delete;
  // Starts the role machine. [main]
  bool start(const mm::machine_config& base);
  void stop();  // any thread
  void join();  // [main]

 private:
  void main();
  replication::vip_holding holds();
  void promote();
  void demote();
  void start_session();
  void end_session();
  void changed(role_state to, const char* what);

  role_settings settings_;
  replication::fanout& fanout_;
  store::store& store_;
  const server_clock& clock_;
  replication::repl_counters& counters_;
  served_role& role_;
  live_cell& live_;
  mm::machine* machine_ = nullptr;
  // Role machine only (after start()).
  role_state state_;
  int64_t lost_at_ns_ = 0;        // [MasterLost] when the session ended
  mm::coroutine_id session_ = 0;  // the running slave session, or 0
  bool session_ended_ = false;    // the session's coroutine returned
  bool session_logged_failure_ = false;
  mm::cond session_done_;      // session -> monitor
  bool check_failed_ = false;  // the last check could not ask the kernel (logged once)
};

}  // namespace ithaca::server
