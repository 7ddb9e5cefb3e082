// A route: where a request goes and how its reply comes back (the router role's
// design, INTERNALS.md "Requests as routes"). Every request goes through one, in both roles: the cache
// role is a tree with one `local` route over the store; the router role's
// tree hashes keys to pools of backend servers (routes/pool_route.cc), and
// later kinds (failover, all-sync, shadow, warm-up) compose child routes.
//
// A route tree is immutable once built and shared by every worker (a reload
// builds a new one and swaps it in; a batch runs on the tree it started with),
// so dispatch() is const and keeps its per-worker state (backend connections)
// in the dispatch_env it is given.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

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
using flow::slot_frame;

class ack_waiters;
class async_runner;
class handle_walk;

// What a route may use while it dispatches, all of it owned by the calling
// worker machine. [one client coroutine]
struct dispatch_env {
  flow::local_executor* local;       // the local store; null when no route of the tree uses it
  commands::server_context* server;  // what the server commands need (stats, version, ...); null off a client
  // Where a reply given at once goes: the client's reply stream when nothing
  // before this request is still pending, else the slot's `deferred` buffer.
  protocol::out_buffer& out;
  proxy::worker_backends* backends;  // this worker's backend connections; null without pools
  ack_waiters* acks = nullptr;       // this worker's writes awaiting a slave (a master only)
  async_runner* async = nullptr;     // this worker's detached requests (all_async, shadow, fills)
};

// What a route node counts, for `stats routes` (relaxed atomics: the
// workers add, `stats` reads; each kind uses the ones it has).
struct route_counters {
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> failovers{0};         // failover: a next child tried
  std::atomic<std::uint64_t> failover_limited{0};  // failover: not tried, over failover_limit
  std::atomic<std::uint64_t> gutter_writes{0};     // failover_exptime: writes with a capped TTL
  std::atomic<std::uint64_t> shadow_sent{0};
  std::atomic<std::uint64_t> async_sent{0};     // all_async / all_initial / stragglers
  std::atomic<std::uint64_t> async_dropped{0};  // over the worker's bound (async_runner.h)
  std::atomic<std::uint64_t> rate_limited{0};
  std::atomic<std::uint64_t> deletes_spooled{0};  // pool, reliable_deletes: failed deletes spooled
  std::atomic<std::uint64_t> deletes_dropped{0};  // ... and those the spool could not take
  static void add(std::atomic<std::uint64_t>& c) { c.fetch_add(1, std::memory_order_relaxed); }
};

enum class dispatch_status : std::uint8_t {
  Done,     // the reply is in env.out; slot.action says what the connection does next
  Pending,  // backend calls are under way; the last one's call_done() readies the slot
};

class route : public flow::frame_owner {
 public:
  explicit route(std::string name) : name_(std::move(name)) {}
  ~route() override = default;
  route(const route&) = delete;
  route& operator=(const route&) = delete;

  // Runs `slot.req` (never blocks the machine; may not suspend either: a
  // route that waits does so through its backend calls, so one client's
  // pipelined batch is dispatched without waiting for each request in turn).
  virtual dispatch_status dispatch(request_slot& slot, dispatch_env& env) const = 0;

  // A composite route that pushed a frame (slot.push_frame) gets the slot
  // back here once every call it started is done, with the frame on top
  // (resume_slot below). Done: slot.result is its answer (the frame is then
  // popped and the route below it resumes); Pending: it started more calls.
  virtual dispatch_status resume(request_slot& slot, dispatch_env& env) const;

  // Whether the route answers into slot.result (as a backend call does), so
  // a composite can look at its answer: every kind but those that render
  // their reply straight into env.out (local, server, the replication gates),
  // which can therefore only be a tree's root or under selectors.
  virtual bool answers_in_result() const { return true; }

  // "pool:main", "local": for logs and `stats`.
  const std::string& name() const { return name_; }
  // The kind's name ("failover", ...), for `stats routes` and introspection.
  virtual const char* kind() const = 0;
  // The routes this one sends to, in order (for stats and introspection).
  virtual std::vector<const route*> children() const { return {}; }
  // Introspection (introspect.h: `__mcrouter__.route_handles(OP,KEY)` and
  // `route(OP,KEY)`): the routes `req` goes to from here, in order. Every
  // child by default; a selector gives the one it picks, so the walk shows
  // the path a request takes rather than every branch. [any thread; pure]
  virtual std::vector<const route*> targets_for(const protocol::request&) const { return children(); }
  // Whether those targets are tried in turn, the next one only when the one
  // before failed (failover): `route(OP,KEY)` then names the first that
  // reaches a server that is up, as a request would.
  virtual bool tries_in_turn(const protocol::request&) const { return false; }
  // How many bytes of `req`'s key this route takes off before its targets
  // see it (routing_prefix: the key's "/region/cluster/"), so introspection
  // asks them about the key they would get. [pure]
  virtual std::size_t prefix_taken_off(const protocol::request&) const { return 0; }
  // Introspection, `route_handles(OP,KEY)` (handle_walk.h): this node's name
  // as mcrouter prints it (its routeName(): "all-sync", "failover:NAME",
  // "selection|hash|Ch3"). By default made from the kind's mcrouter type in
  // its description (config::route_kind_info::mcrouter: AllSyncRoute ->
  // all-sync), else the kind's own name. [any thread; pure]
  virtual std::string handle_name() const;
  // This node's lines of that answer for `req`: by default handle_name() and
  // then each of targets_for(req) one level deeper. A kind whose mcrouter
  // form has nodes ithaca folds into one route (a PoolRoute's asynclog and
  // hash selection, a gutter's modify-exptime) writes them here. [pure]
  virtual void walk_handles(const protocol::request& req, handle_walk& w) const;
  route_counters& counters() const { return counters_; }
  // The counters the kind keeps besides route_counters (its module's
  // route_kind::stats), by field; `stats routes` shows those not zero.
  // [any thread; relaxed reads]
  using counter_out = std::function<void(const char* field, std::uint64_t value)>;
  virtual void kind_counters(const counter_out&) const {}

 private:
  std::string name_;
  mutable route_counters counters_;
};

// Runs the frames of a slot whose calls are done, from the top, while they
// finish at once; then the slot is finished (flow::request_slot::finish).
// [the slot's home coroutine: its client, or the async runner]
void resume_slot(request_slot& slot, dispatch_env& env);

// Dispatches `r` for `slot` as a child step of a composite: brackets the
// calls (a call failing at once cannot finish the slot before every call is
// started) and returns once they are under way.
void dispatch_child(const route& r, request_slot& slot, dispatch_env& env);

}  // namespace ithaca::route
