// The running process's side of a takeover (INTERNALS "Takeover"): the
// "takeover" coroutine on the pooler machine accepts a new process on the
// takeover socket (takeover_path.h), one at a time, and hands it this
// process's place:
//
//   1. reads its hello; sends every listener (TCP, TLS, unix), every UDP
//      socket, the takeover socket itself and, when there is a store to
//      move, one end of a new socket pair (takeover_wire.h);
//   2. attaches the other end to the replication fan-out as a slave (the
//      fan-out machine is started for it when replication is off): the
//      initial sync, then every change, as to any slave;
//   3. once the sync is in the slave's outbox: stops accepting (the new
//      process does not accept yet: the kernel queues connections), stops
//      the workers (each finishes its batch and closes its connection after
//      a complete reply) and waits for them, so every acknowledged write is
//      in the ring; then the end mark behind them (fanout::end_takeover);
//   4. waits for the new process's DONE (it applied everything up to the
//      mark, and serves), then closes its descriptors of the listeners and
//      exits 0 without removing the pid file.
//
// A new process that fails before step 3 (its config, a crash, the timeout)
// leaves this one serving, with a log line saying why. One that fails
// between step 3 and its DONE (its connection closes, or the timeout
// passes: it is then killed, so that two processes never serve diverging
// stores) makes this one resume (pooler::resume_serving): its listeners
// never closed, the connections queued meanwhile are accepted here. Without
// a store to move (a slave, role auto) step 2 is skipped and step 3 waits
// for DONE.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "fanout.h"
#include "machinarium.h"
#include "takeover_wire.h"

namespace ithaca::server {

// What the pooler lends the takeover coroutine. [pooler machine]
struct takeover_host {
  uint64_t timeout_ms = 30000;                          // takeover.timeout: each step's bound, and the whole
  replication::fanout* fanout = nullptr;                // null: no store to move
  mm::machine_config machine;                           // to start the fan-out machine when it does not run
  std::function<std::vector<handed_fd>()> descriptors;  // the listeners and UDP sockets (still theirs)
  // Stops accepting and stops the workers, returning once they have ended
  // (false: not within the timeout). [the takeover coroutine; suspends]
  std::function<bool()> stop_serving;
  // Undoes stop_serving: the workers serve again, the listeners are accepted
  // on again, systemd hears this pid is the main one. [the takeover coroutine]
  std::function<void()> resume_serving;
  std::function<void()> finish;  // the process exits 0, keeping its pid file
};

// The "takeover" coroutine: until cancelled, or until it has handed over.
void takeover_serve(mm::io& listener, const std::string& path, takeover_host& host);

}  // namespace ithaca::server
