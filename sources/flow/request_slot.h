// One request of a client's batch, from parse to reply, and the client's
// in-order queue of them.
//
// Thread: one client coroutine (or UDP loop) owns its queue and slots; a
// backend connection's reader coroutine on the SAME worker machine completes
// a slot's calls (call_done), so no lock is needed anywhere here.
//
// Lifetime: a slot's `req` views point into the client's input buffer, which
// the client keeps (pins) until every slot of the batch has its reply: the
// client reads nothing new while requests are in flight. A client that is
// cancelled (shutdown) with requests still in flight orphans their slots
// instead of freeing them (the backend connection frees each once its last
// call is failed or answered). An orphan keeps a copy of its keys (a get
// line may be shared with other clients' calls, whose values are told apart
// by key); nothing else of its request may be read any more.
//
// Bound: the reply bytes a client's answered requests hold until their turn
// (held()) are counted as the backend reader stores them. Past
// kHeldLimit the request loop stops parsing that client's input (so it stops
// reading it), and a retrieval that is not first in line and can be fetched
// again harmlessly (plain get/gets, an mg that changes nothing) drops its
// bytes at once: it is sent again when it reaches the head. So a client that
// never reads its replies holds about kHeldLimit plus its first request's
// reply, not everything it asked for.
//
// Order: a retrieval sent again must not see a later request of its own
// client (memcached runs one connection's requests in order). So a reply is
// kept, whatever the bound, once a later request that cannot be sent twice
// (a write, a touch...) has gone out; and such a request waits to go out
// until every dropped retrieval before it has been sent again (the two share
// the key's server connection, so the backend runs them in order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec_action.h"
#include "machinarium.h"
#include "out_buffer.h"
#include "reply_drain.h"
#include "request.h"
#include "routed_result.h"

namespace ithaca::flow {

class inflight_queue;

class request_slot {
 public:
  enum class state : std::uint8_t {
    Parsing,   // the parse target; not in flight
    Deferred,  // answered at once while an earlier request was pending: reply in `deferred`
    Pending,   // waiting for its backend calls
    Ready,     // every call is done: render `result`
  };

  protocol::request req;
  protocol::out_buffer deferred;   // [Deferred] the reply, kept until its turn
  protocol::routed_result result;  // [Pending, Ready] what the backend calls gathered
  exec_action action = exec_action::Continue;
  state st = state::Parsing;
  // A request sent only for its side effect (a refused set's delete): not
  // counted in `stats detail` (the set was, with its error).
  bool silent = false;
  // [Pending, Ready] the reply is already rendered in `deferred` (a write
  // parked until a slave confirms it, routes/ack_route.cc), not in `result`.
  bool reply_in_deferred = false;

  // Scratch for routes that split a request's keys by server (kept with
  // their capacity): the key indexes grouped by server, and each key's server.
  std::vector<std::uint32_t> key_order;
  std::vector<std::uint32_t> server_of;
  std::vector<std::uint32_t> group_start;

  // The request loop brackets a dispatch with these, so a call answered
  // during the dispatch (a down server fails at once) cannot ready the slot
  // before the route has started all of its calls.
  void begin_dispatch() { calls_pending_ = 1; }
  void end_dispatch() { call_done(); }
  void abandon_dispatch() { calls_pending_ = 0; }  // answered at once: no calls

  // A route starts one more backend call for this request.
  void add_call() { ++calls_pending_; }
  // Which client this slot belongs to (stable while it lives): connections
  // are chosen by it, so one client's requests to a server stay in order.
  std::uint64_t client_tag() const;
  // A backend call of this request is done (answered or failed). The last one
  // makes the slot Ready and wakes its client; an orphaned slot is freed.
  void call_done();
  bool orphaned() const { return queue_ == nullptr; }

  // [the backend reader] A piece of the reply was stored in `result`: counts
  // its bytes against the client's bound and, past it, drops them from a
  // request that will be fetched again (see the bound above).
  void account_reply();
  // The reply's bytes were dropped: the request must be sent again.
  bool must_refetch() const { return refetch_; }
  // [the client] Uncounts and frees the reply's bytes (rendered, or about to
  // be fetched again); clears must_refetch().
  void release_reply();
  // [the client] This request goes out for the first time: numbers it in its
  // client's order (see Order above).
  void note_dispatch();

 private:
  // Copies the keys out of the client's input, which is about to go.
  void keep_keys();
  std::string kept_keys_;

  friend class inflight_queue;
  void reset();
  inflight_queue* queue_ = nullptr;
  std::uint32_t calls_pending_ = 0;
  std::size_t accounted_ = 0;  // result bytes counted in queue_->held_
  std::uint64_t seq_ = 0;      // its place in its client's order (note_dispatch)
  bool refetch_ = false;
};

class inflight_queue {
 public:
  // More requests than this in flight make the client wait for the oldest
  // before it parses the next one (a bound on what one client can pin).
  static constexpr std::size_t kMaxInflight = 1024;
  // Slots kept allocated between batches: an idle connection holds one.
  static constexpr std::size_t kKeepSlots = 1;
  // Reply bytes a client's requests may hold before it stops being read and
  // its later retrievals drop theirs (request_slot's bound): the cache
  // role's high-water mark for a batch's replies.
  static constexpr std::size_t kHeldLimit = kReplyHighWater;

  inflight_queue();
  ~inflight_queue();  // orphans the slots still pending
  inflight_queue(const inflight_queue&) = delete;
  inflight_queue& operator=(const inflight_queue&) = delete;

  // The slot the next request is parsed into (allocated on first use).
  request_slot& tail();
  // The tail goes in flight behind the others.
  void push_tail();
  bool empty() const { return count_ == 0; }
  bool full() const { return count_ >= kMaxInflight; }
  // Reply bytes its requests hold (answered, not yet rendered).
  std::size_t held() const { return held_; }
  // Retrievals whose replies were dropped and that are not sent again yet.
  std::size_t dropped() const { return dropped_; }
  std::size_t size() const { return count_; }
  request_slot& head() { return *ring_[head_]; }
  // Recycles the head slot once its reply is out.
  void pop_head();

  // Waits until a slot completes (call_done wakes it), or the deadline.
  // [the owning coroutine]
  mm::wait_status wait(int64_t deadline_ns) { return waiter_.wait_until(deadline_ns); }
  void wake() { waiter_.wake(); }

  // Frees the slots beyond kKeepSlots (between batches, nothing in flight).
  void trim();
  std::size_t allocated() const { return ring_.size(); }
  // A number of its own per queue (per client) on its thread: spreads
  // clients over a server's connections. (Its address would not: clients
  // live at the same offset of equally aligned coroutine stacks.)
  std::uint64_t id() const { return id_; }

 private:
  friend class request_slot;  // keeps held_ (account_reply, release_reply)
  std::size_t index(std::size_t i) const { return (head_ + i) % ring_.size(); }
  void grow();

  std::vector<std::unique_ptr<request_slot>> ring_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  std::uint64_t id_;
  std::size_t held_ = 0;  // sum of the slots' accounted_
  std::size_t dropped_ = 0;             // slots with refetch_ set
  std::uint64_t dispatched_ = 0;        // requests sent so far (the last seq_)
  std::uint64_t last_unrepeatable_ = 0;  // seq_ of the last one not to be sent twice
  mm::call waiter_;
};

}  // namespace ithaca::flow
