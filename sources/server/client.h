// Client connections and the pooled sessions that serve them.
//
// A `connection` is what a client costs between requests: its socket, who it
// is, and its parser (which keeps the protocol its first request fixed). With
// no request in progress it is parked in its worker's park_set (no coroutine,
// no stack, no buffer; machinarium.h). When bytes (or the end, or an error)
// arrive, the worker's pool hands it to a `client`: a session, one per pooled
// coroutine, that owns the heavy state (read buffer on its stack, replies,
// requests in flight, route loop) and serves the connection read -> parse
// every complete request -> execute -> one writev for the batch's replies ->
// read again, until a read finds nothing more (park it again) or the
// connection ends. Thread: the worker machine; only the session serving a
// connection touches it, and the worker's main coroutine only while it is
// parked or queued.
#pragma once

#include <memory>
#include <string>

#include "auth_store.h"
#include "executor.h"
#include "live_settings.h"
#include "out_buffer.h"
#include "parser.h"
#include "pool_inspect.h"
#include "request_loop.h"
#include "request_slot.h"
#include "store_dump.h"
#include "stream.h"
#include "worker.h"

namespace ithaca::server {

// How long a session with spare request slots waits before it frees them.
inline constexpr mm::millis kTrimAfterMs = 200;

// The park_set's entry is its base: a queued entry is its connection.
// Kept small: every idle client costs this, its io and the registry entry.
struct connection final : mm::park_set::entry {
  explicit connection(const protocol::parser_settings& settings) : parser(settings) {}
  std::unique_ptr<mm::io> io;
  std::string peer;      // "tcp:1.2.3.4:5" (watch's conn_close)
  std::size_t root = 0;  // the route tree's root its listener serves
  // Its listener's client count when that listener has a limit: given back
  // when the connection closes.
  std::atomic<uint64_t>* listener_clients = nullptr;
  uint64_t id = 0;  // conn_registry's (`stats conns`, watch's cfd=)
  // Which of a backend server's `connections: N` its routed requests use
  // (request_slot::client_tag): one per client, spread over the worker's.
  uint64_t tag = 0;
  protocol::parser parser;
  // Accepted on a TLS listener; its transport stream (plain, or TLS after the
  // handshake) is made by the first session that serves it. A TLS
  // connection is never parked (client.cc).
  bool tls = false;
  config::peer_check tls_peer = config::peer_check::Default;  // its listener's btls: / mtls:
  std::unique_ptr<stream> transport;
  // -Y / -S: whether this client has authenticated (its own, never shared).
  commands::conn_auth auth;
};

// Attaches a socket the pooler handed over, registers it (`stats conns`,
// watch conn_new) and returns it, or nullptr (the socket closed, its
// listener count given back) if it could not be attached. [worker machine]
std::unique_ptr<connection> open_connection(const worker_shared& shared, accepted_socket s);
// Closes `c`: the socket, watch conn_close with memcached's `reason`, the
// registry entry, its listener's count. [worker machine]
void close_connection(const worker_shared& shared, connection& c, std::string_view reason);

class client final : private flow::reply_drain {
 public:
  client(const worker_shared& shared, stats::command_counters& counters);
  enum class outcome { Parked, Closed };
  // Serves `c` until it is parked in `parked` again or closed (then the
  // caller frees it). A cancelled session (shutdown) closes, never parks.
  outcome serve(connection& c, mm::park_set& parked);
  // Request slots beyond what one batch keeps, to give back once quiet.
  bool holds_spare_slots() const { return inflight_.allocated() > flow::inflight_queue::kKeepSlots; }
  void trim() { inflight_.trim(); }

 private:
  bool flush(stream& conn);
  // Reads, freeing spare request slots if the client stays quiet.
  ssize_t read_some(stream& conn, char* buf, size_t len, mm::millis idle);
  // Runs the requests of `input` (-Y: the authentication first),
  // reqs_per_event at a time (memcached -R); the bytes used. `failed`: a
  // write between two runs failed (close).
  size_t run_input(connection& c, std::string_view input, stream& conn, flow::exec_action& action, bool& failed);
  // Continue: the connection was parked; otherwise what ended it.
  flow::exec_action serve_requests(connection& c, mm::park_set& parked, std::string_view& reason);
  // -Y before authentication: memcached's token exchange over `input`
  // (protocol/ascii_auth.h), replies into out_; returns the bytes used.
  size_t authenticate_ascii(connection& c, std::string_view input, flow::exec_action& action);
  std::unique_ptr<stream> open_stream(const connection& c);
  std::string_view close_reason(ssize_t n, mm::millis idle);
  // flow::reply_drain: a batch's replies passed the high-water mark; write
  // them now (the batch waits for a slow reader, within the write timeout).
  bool drain(protocol::out_buffer& out) override;
  bool peer_gone() const override;
  // Picks up a newer live snapshot, if any, for the batch about to run.
  void refresh_live();
  // Who answers the commands only a store can (stats items/slabs, the dumps):
  // the pools for a connection whose requests go to them, else the local store.
  std::size_t value_limit() const;
  void pick_inspector();
  mm::millis idle_timeout() const;

  const worker_shared& shared_;
  live_reader live_;
  stats::command_counters& counters_;
  protocol::out_buffer out_;
  cache::exec_context ctx_;
  commands::server_context server_;
  cache::store_dump dump_{ctx_};   // lru_crawler metadump / mgdump of the local store
  flow::inflight_queue inflight_;  // requests of the batch, in order
  route::loop_context loop_;
  pool_inspect pools_{loop_};  // stats items/slabs and the dumps, asked of the pools
  std::string pending_;        // an incomplete request carried over to the next read
  stream* conn_ = nullptr;     // while serve() serves it
};

}  // namespace ithaca::server
