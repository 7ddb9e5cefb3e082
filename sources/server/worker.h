// A worker machine: receives accepted sockets from the pooler over its
// channel; each client connection waits parked (no coroutine) while it has no
// request in progress, and a bounded pool of session coroutines serves the
// connections whose bytes arrived, in the order they arrived (client.h).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "conn_registry.h"
#include "counters.h"
#include "executor.h"
#include "live_settings.h"
#include "machinarium.h"
#include "parser_settings.h"
#include "server_clock.h"
#include "store.h"

namespace ithaca::proxy {
class worker_backends;
}
namespace ithaca::replication {
class ack_state;
}
namespace ithaca::route {
class ack_waiters;
class async_runner;
}  // namespace ithaca::route

namespace ithaca::server {

class tls_context;
class auth_store;

// A socket handed from the pooler to a worker.
struct accepted_socket {
  int fd = -1;
  std::string peer;      // "tcp:1.2.3.4:5" / "unix:"
  std::string listener;  // local listen address
  std::size_t root = 0;  // the route tree's root its listener serves (route_tree.h)
  // Its listener's client count when that listener has a limit (conn_registry.h);
  // the socket's last owner takes its one back.
  std::atomic<uint64_t>* listener_clients = nullptr;
  bool tls = false;  // a TLS listener: the client handshakes first (tls_stream.h)
  config::peer_check tls_peer = config::peer_check::Default;                // its btls: / mtls: prefix
  kinds::binding_protocol protocol = kinds::binding_protocol::Negotiating;  // its proto[...]: prefix
};

// A bound UDP socket handed to a worker before it starts (udp_server.h). The
// fd is attached to no machine until the worker's udp coroutine attaches it.
struct udp_socket {
  int fd = -1;
  std::string local;  // "127.0.0.1:11211"
};

// Read-only after start: shared by every client coroutine of the worker.
// What a reload may change is not here but in `live` (each coroutine keeps a
// live_reader on it): item_size_max (over parser's), idle_timeout,
// enable_shutdown.
struct worker_shared {
  store::store* store = nullptr;
  stats::stats_provider* stats = nullptr;
  conn_registry* conns = nullptr;
  const server_clock* clock = nullptr;
  const live_cell* live = nullptr;
  protocol::parser_settings parser;  // item_size_max: the start-up value
  size_t read_buffer_size = 16 * 1024;
  int64_t write_timeout_ms = 60000;        // a client that does not drain its replies is closed
  std::function<void()> request_shutdown;  // any thread
  // This worker's backend connections (router role); set by the worker on
  // its machine before any client runs.
  proxy::worker_backends* backends = nullptr;
  // The TLS context of the TLS listeners (tls_context.h); null without -Z.
  tls_context* tls = nullptr;
  // A replication master's ack state (`ack: slave`), shared by every worker;
  // null elsewhere. Each worker then makes its own waiters (`acks`), set on
  // its machine before any client runs.
  replication::ack_state* ack_state = nullptr;
  route::ack_waiters* acks = nullptr;
  // This worker's detached requests (route/async_runner.h); set by the worker.
  route::async_runner* async = nullptr;
  // -Y / -S: the password tables (auth_store.h); null when neither is on.
  const auth_store* auth = nullptr;
  // -S or -Y bound `parser`'s protocol: listeners' proto[] prefixes do not
  // apply (client.cc open_connection).
  bool auth_binds_protocol = false;
};

// Most session coroutines a worker runs at once: connections that wake beyond
// that wait in the park_set's queue, in order, until a session is free.
inline constexpr size_t kMaxSessions = 1024;
// Sessions kept when quiet; the others end after kSessionLingerMs without work.
inline constexpr size_t kKeepSessions = 4;
inline constexpr mm::millis kSessionLingerMs = 2000;

class worker {
 public:
  worker(int index, worker_shared shared, stats::command_counters& counters);
  ~worker();  // closes UDP sockets never handed to a coroutine (the worker did not start)
  worker(const worker&) = delete;
  worker& operator=(const worker&) = delete;
  // Before start(): a UDP socket this worker serves (one coroutine each).
  void add_udp_socket(udp_socket s) { udp_.push_back(std::move(s)); }
  // After start(): serves `s` from now on (a takeover's UDP sockets, once
  // this process serves: takeover_client.h). [any thread]
  void serve_udp(udp_socket s);
  // Starts the machine; false (and logs) if it could not start.
  bool start(const mm::machine_config& base);
  void stop();  // any thread
  void join();
  // A takeover's pause (takeover_server.h), between the old process's stop
  // of accepting and the new one's DONE: every client connection is closed
  // as at stop() (each session finishes its batch and closes; parked and
  // queued ones are closed) and the UDP coroutines end, so nothing changes
  // the store any more; the machine runs on (backend connections, detached
  // requests), so that resume() can serve again if the new process fails.
  // `done` gets this worker's index once that is over. [any thread]
  void pause(std::shared_ptr<mm::channel<int>> done);
  // Serves again after pause(): the UDP sockets are read again and new
  // connections get sessions. [any thread]
  void resume();
  // Pooler side: hand over a socket; the channel bound is the back-pressure.
  mm::channel<accepted_socket>& inbox() { return inbox_; }
  const char* backend_name() const;
  // The machine's runtime counters (zeros before start and after join). Any
  // thread, until join(): the metrics listener, stopped before the workers.
  mm::machine_counters runtime() const;

 private:
  void main();
  bool spawn_session();  // false if no coroutine could be made
  void run_session();
  void run_spawner();
  // Connections queued and no session free to take them.
  bool sessions_short() const { return !paused_ && parked_.queued() > available_ && sessions_ < kMaxSessions; }
  void run_udp(udp_socket s);  // a coroutine for `s`, keeping a copy for resume()
  void pause_main(const std::shared_ptr<mm::channel<int>>& done);

  int index_;
  worker_shared shared_;
  stats::command_counters& counters_;
  mm::channel<accepted_socket> inbox_{4096};
  // This worker's backend connections (router role). Outlives the machine:
  // its connections' coroutines run on it until it stops.
  // Before backends_: the backend connections, destroyed first, fail the
  // detached requests still in flight, which report to the runner.
  std::unique_ptr<route::async_runner> async_;
  std::unique_ptr<proxy::worker_backends> backends_;
  // This worker's writes awaiting a slave (a master only); its coroutine
  // runs on the machine, which it outlives.
  std::unique_ptr<route::ack_waiters> acks_;
  // Set before start(); emptied by main() on the machine as it hands each fd
  // to its coroutine. Only the destructor reads it afterwards (after join).
  std::vector<udp_socket> udp_;
  // Client connections with no request in progress, and those queued for a
  // session. [worker machine]
  mm::park_set parked_;
  size_t sessions_ = 0;   // session coroutines alive
  size_t available_ = 0;  // of those, waiting for a connection or not yet started
  uint64_t taken_ = 0;    // connections the sessions took from the queue, ever
  mm::cond short_;        // signalled when sessions_short(): wakes the spawner
  // A takeover's pause (pause()). [worker machine]
  bool paused_ = false;
  mm::coroutine_id pausing_ = 0;                  // the pause coroutine while it runs
  std::unordered_set<mm::coroutine_id> session_ids_;  // every session coroutine alive
  std::vector<mm::coroutine_id> udp_ids_;         // every UDP coroutine alive
  // A duplicate of each UDP socket served (a coroutine closes its own when it
  // ends): resume() serves these again. Closed by the destructor.
  std::vector<udp_socket> udp_kept_;
  mm::machine* machine_ = nullptr;
  std::atomic<bool> stop_sent_{false};  // stop() posts the Stop message once
};

}  // namespace ithaca::server
