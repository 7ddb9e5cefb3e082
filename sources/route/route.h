// A route: where a request goes and how its reply comes back (DESIGN.md,
// "Router role"). Every request goes through one, in both roles: the cache
// role is a tree with one `local` route over the store; the router role's
// tree hashes keys to pools of backend servers (routes/pool_route.cc), and
// later kinds (failover, all-sync, shadow, warm-up) compose child routes.
//
// A route tree is immutable once built and shared by every worker (a reload
// builds a new one and swaps it in; a batch runs on the tree it started with),
// so dispatch() is const and keeps its per-worker state (backend connections)
// in the dispatch_env it is given.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "exec_action.h"
#include "local_executor.h"
#include "out_buffer.h"
#include "request_slot.h"
#include "server_commands.h"

namespace ithaca::proxy {
class worker_backends;
}

namespace ithaca::route {

// The request layer's pieces every route uses (sources/flow/).
using flow::exec_action;
using flow::inflight_queue;
using flow::request_slot;

class ack_waiters;

// What a route may use while it dispatches, all of it owned by the calling
// worker machine. [one client coroutine]
struct dispatch_env {
  flow::local_executor* local;     // the local store; null when no route of the tree uses it
  flow::server_context& server;    // what the server commands need (stats, version, ...)
  // Where a reply given at once goes: the client's reply stream when nothing
  // before this request is still pending, else the slot's `deferred` buffer.
  protocol::out_buffer& out;
  proxy::worker_backends* backends;  // this worker's backend connections; null without pools
  ack_waiters* acks = nullptr;       // this worker's writes awaiting a slave (a master only)
};

enum class dispatch_status : std::uint8_t {
  Done,     // the reply is in env.out; slot.action says what the connection does next
  Pending,  // backend calls are under way; the last one's call_done() readies the slot
};

class route {
 public:
  explicit route(std::string name) : name_(std::move(name)) {}
  virtual ~route() = default;
  route(const route&) = delete;
  route& operator=(const route&) = delete;

  // Runs `slot.req` (never blocks the machine; may not suspend either: a
  // route that waits does so through its backend calls, so one client's
  // pipelined batch is dispatched without waiting for each request in turn).
  virtual dispatch_status dispatch(request_slot& slot, dispatch_env& env) const = 0;

  // "pool:main", "local": for logs and `stats`.
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

}  // namespace ithaca::route
