// The new process's side of a takeover (`ithaca --takeover`; INTERNALS
// "Takeover"; the old side is takeover_server.h). On the main thread, after
// the config is read and before any listener is bound:
//
//   takeover_connect   hello, then the old process's descriptors
//   (instance.cc)      the listeners are adopted by the pooler, the UDP
//                      sockets by the workers, once this process serves
//   takeover_receive_store   the store, applied from the old process's
//                      stream on a machine of its own, until its end mark
//   takeover_done      once the listeners accept: DONE, and the old exits
//
// Any failure before takeover_done ends this process with exit 1 and the
// reason on stderr; the old one keeps serving.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "config.h"
#include "machinarium.h"
#include "repl_counters.h"
#include "store.h"
#include "takeover_wire.h"
#include "worker.h"

namespace ithaca::server {

struct takeover_handoff {
  int control = -1;            // the connection to the old process
  int stream = -1;             // the store's stream; -1: nothing to receive
  int takeover_listener = -1;  // the takeover socket, for the next takeover
  std::string takeover_path;
  pid_t old_pid = 0;  // the old process (SO_PEERCRED), whose exit frees its spool and ports
  std::vector<handed_fd> listeners;
  std::vector<handed_fd> udp;
};

// Connects to the takeover socket `path`, says hello, receives the
// descriptors. False (`why`) on any failure, with nothing left open.
bool takeover_connect(const std::string& path, uint64_t timeout_ms, takeover_handoff& out, std::string* why);

// The listen entry `index`'s listener if the old process had the same one
// (same index and address); -1 otherwise. The descriptor is the caller's.
int takeover_take_listener(takeover_handoff& h, size_t index, const std::string& address);

// The UDP sockets for `addresses` (udp_bind_listeners's): the old process's
// sockets of each address, spread over the workers (one socket each at
// least: more workers than sockets bind more into the same SO_REUSEPORT
// group). out[w] gets worker w's. False (logged) if a bind fails.
bool takeover_udp(takeover_handoff& h, const std::vector<std::string>& addresses, unsigned workers,
                  std::vector<std::vector<udp_socket>>& out);

// Applies the old process's stream to `st` on a machine of its own until the
// end mark, within the timeout. False (`why`) otherwise. [main thread]
bool takeover_receive_store(takeover_handoff& h, const mm::machine_config& mc, uint64_t timeout_ms, store::store& st,
                            std::function<store::store_now()> now, replication::repl_counters& counters,
                            std::string* why);

// READY to the old process: everything but the listeners has started. False
// (`why`) if it cannot be sent.
bool takeover_ready(takeover_handoff& h, std::string* why);
// DONE to the old process (this one serves); closes what was not adopted.
void takeover_done(takeover_handoff& h);
// Closes every descriptor still held (a failed takeover).
void takeover_close(takeover_handoff& h);

}  // namespace ithaca::server
