// The request loop both connection kinds share (the TCP/unix client coroutine
// and the UDP datagram loop): parse every complete request of an input,
// dispatch each through the route tree without waiting for the one before,
// and put the replies into the connection's reply stream strictly in request
// order as they complete.
//
// Thread: the connection's coroutine on its worker machine. It suspends only
// to wait for backend replies of requests in flight (never under a lock).
#pragma once

#include <cstddef>
#include <string_view>

#include "exec_action.h"
#include "out_buffer.h"
#include "parser.h"
#include "request_slot.h"
#include "route.h"
#include "route_tree.h"

namespace ithaca::route {

// A connection's loop state, owned by its coroutine.
struct loop_context {
  flow::local_executor* local;       // the local store; null when the tree uses none
  commands::server_context& server;  // the server commands' context (stats, counters, ...)
  flow::reply_drain* drain;          // drains `out` past the high-water mark; null: never early
  const route_tree* tree;            // the snapshot this batch runs on
  inflight_queue& inflight;
  protocol::out_buffer& out;                   // the reply stream
  proxy::worker_backends* backends = nullptr;  // this worker's, when the tree has pools
  ack_waiters* acks = nullptr;                 // this worker's, on a replication master
  async_runner* async = nullptr;               // this worker's detached requests (route.h)
  // Which of the tree's roots this connection dispatches on: its listener's
  // (route_tree.h; 0 = the default root, also UDP's).
  std::size_t root = 0;
  // memcached -R: execute_input runs at most this many requests of its input
  // (0: all of them, as the UDP loop wants), then returns with `yield_due`
  // set if input is left, so the caller sends the replies and lets the
  // worker's other connections go first before it runs the rest. Requests
  // in flight then stay in flight: the caller must call again over the rest
  // of the same input (with budget 0 if it will not yield again), and that
  // last call settles them or orphans them.
  std::size_t request_budget = 0;
  bool yield_due = false;
};

// Longest a connection waits for a request in flight. Backend calls end
// long before (their request timeout fails them), so reaching this means a
// bug: the connection is closed rather than left waiting.
inline constexpr mm::millis kInflightWaitLimitMs = 10 * 60 * 1000;

// Parses and runs every complete request in `input` with `parser` (which
// keeps its state across calls). Returns the bytes consumed, once EVERY
// request it started has its reply in `lc.out` (the input is pinned until
// then: requests in flight point into it). Stops early when a request asks
// to close or shut down (`action`), when the input ends in an incomplete
// request (the rest is not consumed), or after lc.request_budget requests
// with input left (lc.yield_due).
std::size_t execute_input(protocol::parser& parser, std::string_view input, loop_context& lc, exec_action& action);

}  // namespace ithaca::route
