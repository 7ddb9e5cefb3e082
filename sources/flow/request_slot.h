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
// call is failed or answered); so does a connection that ends with requests
// in flight (inflight_queue::abandon). An orphan keeps a copy of its keys and
// value (a get line may be shared with other clients' calls, whose values
// are told apart by key; a write still waiting to be sent is encoded from
// them); nothing else of its request that points into the input (args, a
// meta opaque) may be read any more.
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
//
// Composition (the route tree's composite kinds, route/routes/): a route that
// must see what its child gathered before it answers (failover, warm-up, ...)
// pushes a frame; when every call is done, the slot goes back to its home
// (the client's queue, or the worker's async runner) instead of being Ready,
// and the home's coroutine resumes the frame's route (route::resume_slot).
// Routes that send one request to several children at once (all_sync, ...)
// give each child a child slot of its own (child()): its result is its own,
// its completion counts as one call of its parent. A detached slot (all_async,
// shadow, warm-up fills) owns a copy of its request and outlives the client
// reply; it frees itself once done (slot_home::finished).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
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
class request_slot;
struct slot_frame;

// Where a slot goes back when a composite route must see its calls' results
// (a frame is on it), and where a slot with no queue reports that it is done.
// Implemented by inflight_queue (a client's) and route::async_runner (a
// worker's detached requests). [the slot's worker]
class slot_home {
 public:
  virtual void resume_later(request_slot& s) = 0;
  // A slot of this home with no frame left has its result (or, detached, is
  // done): the queue marks it Ready; the async runner frees it.
  virtual void finished(request_slot& s) = 0;
  // `s` (queued by resume_later) will not be resumed after all: its parent
  // answered without it.
  virtual void cancel_resume(request_slot& s) = 0;

 protected:
  ~slot_home() = default;
};

// Whatever pushes frames (every route::route is one).
class frame_owner {
 public:
  virtual ~frame_owner() = default;
  // [a parent slot waiting for some of its children: request_slot::
  // wait_for_some] `child` has answered: true when the parent has enough
  // (it is then resumed; the children still out are its stragglers).
  // Called where the child finishes (a backend reader, or the home's
  // coroutine); it may only look at results, not dispatch.
  virtual bool child_answered(request_slot& parent, request_slot& child) const;
  // [where the slot's last call finishes] Whether the frame's route must run
  // (resume) for what the slot now holds; false: the frame is popped there
  // and then, so a failover whose first child answered costs no trip through
  // the home's coroutine. Looks at results only.
  virtual bool wants_resume(const request_slot& slot, const slot_frame& frame) const;
};

// One composite route's place in a request, on the slot's frame stack.
struct slot_frame {
  const frame_owner* owner = nullptr;
  std::uint32_t state = 0;  // the route's own step (the child tried, the phase)
  std::uint32_t count = 0;  // the route's own count (children sent, ...)
  std::int64_t saved = 0;   // a request field the route changed, to restore
};

class request_slot {
 public:
  // Who owns the slot and what it may read.
  enum class ownership : std::uint8_t {
    Queue,     // a client's in-flight queue (its request points into the client's input)
    Child,     // a composite's child slot, owned by its parent
    Orphan,    // its client is gone: only its keys may be read; frees itself when done
    Detached,  // owns a copy of its request (async work); frees itself when done
  };
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
  // A shadow's copy (routes/shadow_route), and every child of one: each
  // server bounds how many it holds (the pool's max_shadow_requests,
  // mcrouter's --target-max-shadow-requests).
  bool shadow = false;
  // [Pending, Ready] the reply is already rendered in `deferred` (a write
  // parked until a slave confirms it, routes/ack_route.cc), not in `result`.
  bool reply_in_deferred = false;
  // A long text get is sent as parts of kGetPartKeys keys, one slot each, so
  // one multiget is held and fetched part by part like a pipeline of gets
  // (the client's bound below holds inside it): only the Last part ends the
  // reply with END.
  enum class get_part : std::uint8_t { Whole, First, Middle, Last };
  get_part part = get_part::Whole;

  // Scratch for routes that split a request's keys by server (kept with
  // their capacity): the key indexes grouped by server, and each key's server.
  std::vector<std::uint32_t> key_order;
  std::vector<std::uint32_t> server_of;
  std::vector<std::uint32_t> group_start;
  // [a composite's child slot] The parent's index of each of this child's
  // keys (merge_hits' map), set by the composite that made the child. Apart
  // from the scratch above, which the route the child is sent to uses for
  // its own split (a pool groups the child's keys by server in key_order).
  std::vector<std::uint32_t> key_map;

  // [a client's request: the root of its slots] mcrouter's pool-stats group
  // (proxy/pool_group_stats.h) that the request reached first (-1: none
  // yet), and when it was parsed (set only with groups configured).
  std::int16_t pool_group = -1;
  std::int64_t began_ns = 0;

  // [the request loop] A new request is parsed into this slot: what the last
  // one answered at once left on it (a `quit`'s Close, a silent delete's
  // mark) must not steer it. A slot answered straight into the reply stream
  // is never popped (pop_head resets the others), so this is the one place
  // that clears it.
  void begin_request() {
    action = exec_action::Continue;
    silent = false;
    shadow = false;
    reply_in_deferred = false;
    part = get_part::Whole;
    pool_group = -1;
  }

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
  // makes the slot Ready and wakes its client, sends it back to its home when
  // a frame waits for it, counts as a call of its parent (a child), or frees
  // an orphaned or detached slot.
  void call_done();
  // The client's request this slot is (a Queue slot) or is a child of; null
  // for a detached or orphaned one, whose answer reaches no client.
  request_slot* client_request();
  // The request may not be read any more (only its keys): its client is gone.
  bool orphaned() const { return own_ == ownership::Orphan; }
  ownership owner() const { return own_; }

  // [composite routes] The frame stack (see Composition above).
  void push_frame(const slot_frame& f) { frames_.push_back(f); }
  bool has_frames() const { return !frames_.empty(); }
  slot_frame& top_frame() { return frames_.back(); }
  void pop_frame() { frames_.pop_back(); }
  // The last frame finished at once: the slot has its result (a client's is
  // Ready, a child counts as done for its parent, a detached one is done).
  void finish();
  // Child slot i (allocated on first use, kept with its capacity): a copy of
  // this request with an empty result, its completion one call of this slot.
  // The caller add_call()s for it before it dispatches it.
  request_slot& child(std::size_t i);
  // Child slot i asking only for this request's keys `which` (its key_map:
  // the parent's index of each), in that order; every key when `which` is
  // empty. For the composites that send a multi-key get on in pieces.
  request_slot& child_for_keys(std::size_t i, std::span<const std::uint32_t> which = {});
  // Child slot i as it is (i < children_in_use()).
  request_slot& child_at(std::size_t i) { return *children_[i]; }
  // Children in use by the current request (child() raises it; reset clears).
  std::size_t children_in_use() const { return children_used_; }
  // The children answer to the top frame's owner one by one
  // (frame_owner::child_answered) instead of each counting as a call: the
  // caller add_call()s once for the whole group, released when the owner
  // says it has enough.
  void wait_for_some() { some_ = some::Waiting; }
  // Whether child i has answered (finished).
  bool child_answered(std::size_t i) const { return children_[i]->reported_; }
  // Takes child i out of this slot, still in flight: it no longer reports
  // here (the caller adopts it as a detached request, async_runner::adopt).
  std::unique_ptr<request_slot> release_child(std::size_t i);
  // Makes this slot (and its children still out) own copies of their
  // requests and free itself when done, homed at `home` (a straggler adopted
  // by the async runner). A slot whose calls are already done and that only
  // waited to be resumed is not sent on: it returns its own stragglers still
  // in flight (to adopt in turn), and the caller frees it.
  std::vector<std::unique_ptr<request_slot>> detach_to(slot_home& home);
  // True after detach_to() made this slot a detached one.
  bool is_detached() const { return own_ == ownership::Detached; }
  // A detached copy of `r` (its keys and value copied into the slot), homed
  // at `home`: it frees itself once its last call is done.
  static std::unique_ptr<request_slot> detached(const protocol::request& r, slot_home& home);

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
  friend class inflight_queue;
  void reset();
  // The client is gone: this slot and its pending children become orphans.
  // True if something is still pending (the slot frees itself later).
  bool orphan();
  void held_release();               // uncounts this slot's bytes from its client's bound
  inflight_queue* queue_ = nullptr;  // the root client's (Queue, Child); null otherwise
  slot_home* home_ = nullptr;
  request_slot* parent_ = nullptr;  // Child
  ownership own_ = ownership::Queue;
  std::vector<slot_frame> frames_;
  std::vector<std::unique_ptr<request_slot>> children_;
  std::size_t children_used_ = 0;
  bool reported_ = false;  // Child: its completion was counted by its parent
  enum class some : std::uint8_t { Off, Waiting, Enough };
  some some_ = some::Off;  // wait_for_some()
  void copy_request();     // req's keys and value into owned_
  void detach_tree(slot_home& home);
  std::string owned_;  // Detached: the request's keys and value
  std::uint32_t calls_pending_ = 0;
  std::size_t accounted_ = 0;  // result bytes counted in queue_->held_
  std::uint64_t seq_ = 0;      // its place in its client's order (note_dispatch)
  bool refetch_ = false;
};

class inflight_queue final : public slot_home {
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
  // The connection is gone (closed by its client, reset, a failed write):
  // its requests still in flight become orphans (each freed by its last
  // call), every other slot is emptied, and the counts start again, so
  // nothing of this connection reaches the next one a pooled session
  // serves (a reply, a held byte, a resume). [the owning coroutine]
  void abandon();
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

  // slot_home: a slot (or a child slot) of this client whose frame waits.
  void resume_later(request_slot& s) override;
  void finished(request_slot& s) override;
  void cancel_resume(request_slot& s) override;
  // Takes the next slot to resume, or null. [the owning coroutine]
  request_slot* next_resume();

  // Frees the slots beyond kKeepSlots (between batches, nothing in flight).
  void trim();
  std::size_t allocated() const { return ring_.size(); }
  // Whether a part of the split get being rendered had hits (the request
  // loop's render_ready: a get whose every part failed answers with the
  // failure's line, one with some hits treats the failed keys as misses).
  // [the owning coroutine]
  bool parts_hit() const { return parts_hit_; }
  void set_parts_hit(bool on) { parts_hit_ = on; }
  // A number of its own per queue (per client) on its thread: spreads
  // clients over a server's connections. (Its address would not: clients
  // live at the same offset of equally aligned coroutine stacks.)
  std::uint64_t id() const { return id_; }
  // A pooled session's queue serves one connection after another: it takes
  // the tag of the one it serves, so that client keeps its backend connection.
  void set_id(std::uint64_t id) { id_ = id; }

 private:
  friend class request_slot;  // keeps held_ (account_reply, release_reply)
  std::size_t index(std::size_t i) const { return (head_ + i) % ring_.size(); }
  void grow();

  std::vector<std::unique_ptr<request_slot>> ring_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  std::uint64_t id_;
  std::size_t held_ = 0;                 // sum of the slots' accounted_
  std::size_t dropped_ = 0;              // slots with refetch_ set
  std::uint64_t dispatched_ = 0;         // requests sent so far (the last seq_)
  std::uint64_t last_unrepeatable_ = 0;  // seq_ of the last one not to be sent twice
  std::vector<request_slot*> resumes_;   // slots whose frames wait to run
  std::size_t resume_next_ = 0;          // resumes_[resume_next_..] are still to run
  bool parts_hit_ = false;
  mm::call waiter_;
};

}  // namespace ithaca::flow
