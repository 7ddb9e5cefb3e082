// The slave's loop (yrmcds's repl_client_socket and on_slave_start): connect
// to the master, forget the local data, apply the stream (SetQ / Touch /
// DeleteQ) to the store, and send one heartbeat byte every interval. When the
// connection ends or the stream is garbage, it waits a moment and starts over
// (a new connection means a new initial sync). A master whose host goes
// silent (power loss, partition, its link down) ends the connection too,
// within master_timeout: the kernel fails it when the heartbeats go
// unacknowledged (TCP_USER_TIMEOUT, keepalive between them), so an idle
// master, which sends nothing but acknowledges them, is never dropped.
//
// Runs as the main coroutine of the slave's own machine (instance.cc), the
// store's only writer while this node is a slave (clients are closed).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "repl_counters.h"
#include "store.h"
#include "tls_setup.h"

namespace ithaca::replication {

struct slave_settings {
  std::string master_host;
  std::string master_port;
  uint64_t heartbeat_interval_ms = 1000;
  uint64_t master_timeout_ms = 10000;  // what we send unacknowledged this long: the master is lost
  uint64_t reconnect_delay_ms = 1000;
  uint64_t max_value = 1 << 20;  // larger values are a stream error
  // replication.tls: the client context with this node's certificate
  // (net/tls_setup.h); null: plaintext, as yrmcds. The master's
  // certificate must chain to the CA, and carry tls_server_name if set.
  net::ssl_ctx_ptr tls_ctx;
  std::string tls_server_name;
};

// Until cancelled.
void slave_main(const slave_settings& s, store::store& st, const std::function<store::store_now()>& now,
                repl_counters& counters);

// One connection's life: connect to the master, forget the local data, apply
// the stream until the master goes away, the stream breaks or the coroutine
// is cancelled. False if no connection was made (`*logged_failure` keeps the
// log to one line per outage). slave_main loops over it; the role monitor
// (roles by virtual IP) loops only until a connection was made, since it
// decides what follows a lost master.
bool slave_session(const slave_settings& s, store::store& st, const std::function<store::store_now()>& now,
                   repl_counters& counters, bool* logged_failure);

// Takeover (server/takeover_client.h): follows the old process's stream on
// `fd` (a unix socket it handed over; taken here) into the store, which is
// empty: the old process's initial sync, then its changes, until its end mark
// (true: everything the old process acknowledged is applied) or the stream's
// end, a broken stream, or `deadline_ns` (mm::now_ns) passing (false, `*why`
// says which). Heartbeats go back as a slave's do. [a machine's coroutine]
bool takeover_follow(int fd, const slave_settings& s, store::store& st, const std::function<store::store_now()>& now,
                     repl_counters& counters, int64_t deadline_ns, std::string* why);

}  // namespace ithaca::replication
