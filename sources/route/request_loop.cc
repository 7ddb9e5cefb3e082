#include "request_loop.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "command_class.h"
#include "introspect.h"
#include "mcrouter_counts.h"
#include "parse_error_reply.h"
#include "pool_group_stats.h"
#include "prefix_stats.h"
#include "reply.h"
#include "reply_drain.h"
#include "routed_counts.h"
#include "server_commands.h"
#include "worker_backends.h"

namespace ithaca::route {

namespace {

// `stats detail` for a request a server answered: the same commands the
// local store counts (exec_ascii.cc, exec_binary.cc): classic retrievals
// per key with their hit (binary touch too), stores, deletes; never meta.
void record_prefix_stats(const protocol::request& req, const protocol::routed_result& result) {
  using protocol::command;
  stats::prefix_stats& ps = stats::prefix_stats::instance();
  if (!ps.enabled() || req.proto == protocol::protocol_kind::Meta || req.cmd == command::LeaseGet ||
      req.cmd == command::LeaseSet)
    return;
  switch (protocol::classify(req)) {
    case protocol::command_class::Retrieve:                          // get gets gat gats, binary get/gat/touch
      if (result.outcome != protocol::routed_outcome::Hits) return;  // failed: nothing was looked up
      for (std::size_t i = 0; i < req.keys.size() && i < result.key_count(); ++i) {
        ps.record_get(req.keys[i], result.hit(i).found);
      }
      return;
    case protocol::command_class::Store: ps.record_set(req.key()); return;
    case protocol::command_class::Delete: ps.record_delete(req.key()); return;
    default: return;
  }
}

// A retrieval whose reply was dropped while it waited behind others (its
// client held too much, request_slot.h) is first in line now: sent again, on
// the tree its batch runs on.
// Sends a slot already counted in the queue (not first in line, so an
// answer at once goes to its deferred buffer).
void dispatch_queued(loop_context& lc, request_slot& s) {
  dispatch_env env{lc.local, &lc.server, s.deferred, lc.backends, lc.acks, lc.async};
  s.begin_dispatch();
  if (lc.tree->root(lc.root).dispatch(s, env) == dispatch_status::Done) {
    s.abandon_dispatch();
    s.st = request_slot::state::Deferred;
  } else {
    s.st = request_slot::state::Pending;
    s.end_dispatch();  // Ready now if every call was already answered
  }
}

void fetch_again(loop_context& lc, request_slot& s) {
  s.release_reply();
  dispatch_queued(lc, s);
}

// A ready slot's reply into the stream. The parts of a long get (split_get)
// answer as the whole get would have: each part's hits in key order and one
// END after the last; a part that failed (its server down, an error line)
// leaves its keys as misses, as a pool route does with the keys of a server
// that failed among others; and if every part failed, the reply is the
// failure's one line, as for a get sent whole.
void render_ready(loop_context& lc, request_slot& s) {
  using part = request_slot::get_part;
  if (s.part == part::Whole) return protocol::render_routed_reply(s.req, s.result, lc.out);
  if (s.part == part::First) lc.inflight.set_parts_hit(false);
  const bool hit = s.result.outcome == protocol::routed_outcome::Hits;
  if (s.part != part::Last) {
    if (hit) protocol::render_routed_reply(s.req, s.result, lc.out, false);
    if (hit) lc.inflight.set_parts_hit(true);
    return;
  }
  if (hit || !lc.inflight.parts_hit()) return protocol::render_routed_reply(s.req, s.result, lc.out);
  protocol::encode_ascii_status(lc.out, protocol::ascii_status::End);  // this part's keys: misses
  lc.out.mark_sent();
}

// Resumes the composites whose children have answered (route.h), in any
// slot of the queue: a failover retries as soon as its first try failed,
// not once the request reaches the head.
void run_resumes(loop_context& lc) {
  while (request_slot* s = lc.inflight.next_resume()) {
    dispatch_env env{lc.local, &lc.server, s->deferred, lc.backends, lc.acks, lc.async};
    resume_slot(*s, env);
  }
}

// Moves every finished request at the head of the queue into the reply
// stream, in order. False if a drain failed (stop and close).
bool pop_ready(loop_context& lc) {
  run_resumes(lc);
  while (!lc.inflight.empty()) {
    request_slot& s = lc.inflight.head();
    if (s.st == request_slot::state::Ready && s.must_refetch()) {
      fetch_again(lc, s);
      continue;
    }
    if (s.st == request_slot::state::Deferred || (s.st == request_slot::state::Ready && s.reply_in_deferred)) {
      lc.out.splice(s.deferred);
    } else if (s.st == request_slot::state::Ready) {
      if (!s.silent) {
        record_prefix_stats(s.req, s.result);
        // memcached's hit/miss counters for what the servers answered.
        stats::count_routed(s.req, s.result, lc.server.counters);
      }
      render_ready(lc, s);
    } else {
      return true;  // the head is still pending
    }
    if (s.pool_group >= 0 && lc.backends != nullptr) proxy::pool_group_answered(s, lc.backends->worker());
    lc.inflight.pop_head();
    if (!flow::drain_if_full(lc.out, lc.drain)) return false;
  }
  return true;
}

// Whether the client may not start another request yet: too many in flight,
// or their replies hold too much (request_slot.h's bound; the client is not
// read meanwhile).
bool must_wait(const loop_context& lc) { return lc.inflight.full() || lc.inflight.held() > inflight_queue::kHeldLimit; }

// Keys per part of a long text get sent to servers (split_get): a part's
// replies are held whole, so this bounds what one part holds to this many
// values.
constexpr std::size_t kGetPartKeys = 16;

// How often a client waiting for its replies looks whether it is still there.
constexpr mm::millis kPeerCheckMs = 200;

// What settle() waits for.
enum class settle_until {
  Room,    // another request may start (must_wait is false)
  Resent,  // ... and every dropped retrieval has been sent again
  Empty,   // every request in flight has been answered
};

bool settled(const loop_context& lc, settle_until until) {
  switch (until) {
    case settle_until::Room: return !must_wait(lc);
    case settle_until::Resent: return !must_wait(lc) && lc.inflight.dropped() == 0;
    case settle_until::Empty: break;
  }
  return false;
}

// Waits until the head is done and pops what is ready (sending the dropped
// retrievals that reach the head again), until `until` holds. False:
// cancelled, a drain failed, or the limit was reached; the connection must
// close.
bool settle(loop_context& lc, settle_until until) {
  const int64_t deadline = mm::deadline_after(kInflightWaitLimitMs);
  for (;;) {
    if (!pop_ready(lc)) return false;
    if (lc.inflight.empty() || settled(lc, until)) return true;
    // Waited for in slices: a client reset meanwhile is let go at once (its
    // requests orphaned by the caller), not when a slow server answers.
    mm::wait_status w = lc.inflight.wait(std::min(deadline, mm::deadline_after(kPeerCheckMs)));
    if (w == mm::wait_status::Cancelled) return false;
    if (w == mm::wait_status::TimedOut && lc.drain != nullptr && lc.drain->peer_gone()) return false;
    if (w == mm::wait_status::TimedOut && mm::now_ns() >= deadline &&
        lc.inflight.head().st == request_slot::state::Pending) {
      spdlog::error("{}: a request in flight got no reply within {} ms; closing the connection", mm::coroutine_name(),
                    kInflightWaitLimitMs);
      return false;
    }
  }
}

// Whether a request is a text get long enough to be sent in parts: a
// retrieval that can be asked twice (so a part's reply may be dropped and
// fetched again, request_slot.h) on a root that answers in the slot's result.
bool splits(const protocol::request& req, const route& root) {
  return req.proto == protocol::protocol_kind::Ascii &&
         (req.cmd == protocol::command::Get || req.cmd == protocol::command::Gets) && req.keys.size() > kGetPartKeys &&
         root.answers_in_result();
}

// Sends every part but the last of the long get parsed into `first` (each
// kGetPartKeys keys, in key order, one slot each, queued behind the others as
// any pipelined request: the client's bound on held replies then holds
// inside one multiget, and a part that is not first in line drops its bytes
// past it and is fetched again at the head). Returns the tail slot holding
// the last part, for the caller to dispatch as any request; null if the
// connection must close (a wait for room failed).
request_slot* split_get(loop_context& lc, request_slot& first) {
  const protocol::request whole = first.req;
  request_slot* slot = &first;
  const std::size_t n = whole.keys.size();
  for (std::size_t at = 0;; at += kGetPartKeys) {
    slot->req.keys.clear();
    for (std::size_t i = at; i < std::min(n, at + kGetPartKeys); ++i) slot->req.keys.push_back(whole.keys[i]);
    if (at + kGetPartKeys >= n) {
      slot->part = request_slot::get_part::Last;
      return slot;
    }
    slot->part = at == 0 ? request_slot::get_part::First : request_slot::get_part::Middle;
    lc.server.replies_pending = true;
    slot->note_dispatch();
    lc.inflight.push_tail();
    dispatch_queued(lc, *slot);
    if (!pop_ready(lc) || (must_wait(lc) && !settle(lc, settle_until::Room))) return nullptr;
    slot = &lc.inflight.tail();
    slot->begin_request();
    if (proxy::pool_groups_on()) slot->began_ns = mm::now_ns();
    slot->req = whole;
  }
}

// Parse errors with a side effect beyond their reply (exec_errors.cc): a
// `set` too large for the cache unlinks the old item; a text get refused for
// a long key culls the replies memcached had not sent yet.
bool routed_side_effect(const protocol::parse_result& r, const protocol::request& req) {
  using protocol::command;
  if (r.error == protocol::error_kind::TooLarge) return req.cmd == command::Set && !req.key().empty();
  return r.error == protocol::error_kind::KeyTooLong && req.proto == protocol::protocol_kind::Ascii &&
         (req.cmd == command::Get || req.cmd == command::Gets || req.cmd == command::Gat || req.cmd == command::Gats);
}

// memcached -F: a flush is refused before any route, in either role; an
// ascii flush_all whose delay does not parse is refused too (memcached looks
// at -F before the arguments).
bool refuses_flush(const protocol::parse_result& r, const protocol::request& req, const commands::server_context& s) {
  if (s.flush_enabled || req.cmd != protocol::command::FlushAll) return false;
  if (r.status == protocol::parse_status::Ok) return true;
  return r.status == protocol::parse_status::Error && req.proto == protocol::protocol_kind::Ascii &&
         r.error == protocol::error_kind::BadFormat;
}

// Turns the refused `set` into the delete memcached does in its place,
// answered by nobody (the client already has its SERVER_ERROR).
void as_silent_delete(protocol::request& req) {
  const std::string_view key = req.key();
  req.keys.clear();
  req.keys.push_back(key);
  req.cmd = protocol::command::Delete;
  req.proto = protocol::protocol_kind::Ascii;
  req.noreply = true;
  req.value = {};
  req.cas = 0;
}

// -S: a binary request its client may not make before authenticating
// (memcached checks once a packet's lengths are judged sane, before its
// opcode's own rules): answered "Auth failure.", then the connection closes.
bool refused_unauthenticated(const loop_context& lc, const protocol::parse_result& r, const protocol::request& req) {
  const commands::server_context& s = lc.server;
  if (s.sasl == nullptr || s.auth == nullptr || s.auth->authenticated) return false;
  if (req.proto != protocol::protocol_kind::Binary) return false;
  if (r.status == protocol::parse_status::Error &&
      (r.error == protocol::error_kind::BadMagic || r.error == protocol::error_kind::LyingLength)) {
    return false;
  }
  return !commands::allowed_unauthenticated(req.opcode);
}

// One parsed request (or parse error) to where it goes: refused before any
// route (-S before login, -F's flush), a parse error's reply (and, routed,
// memcached's side effect as a silent delete to the key's server, in this
// request's place in the order), an introspection get answered here, else the
// connection's root (or the server-command tree). `st` is the dispatch's
// status. False when the connection must close at once (waiting for the
// slots before a side effect failed). [execute_input's loop; inline there]
inline bool dispatch_parsed(loop_context& lc, const protocol::parse_result& r, request_slot& slot, dispatch_env& env,
                            const route& root, bool all_local, bool routes_to_servers, dispatch_status& st) {
  if (refused_unauthenticated(lc, r, slot.req)) {
    protocol::encode_binary_error(env.out, slot.req, protocol::binary_status::AuthError);
    slot.action = exec_action::Close;
  } else if (refuses_flush(r, slot.req, lc.server)) {
    commands::refuse_flush_all(slot.req, env.out, lc.server);
  } else if (r.status == protocol::parse_status::Error && routes_to_servers && routed_side_effect(r, slot.req)) {
    // The parser refused it, but memcached's side effect happens on the
    // server that holds the key, in this request's place in the order.
    if (!settle(lc, settle_until::Empty)) return false;
    lc.server.counters.parse_errors.add();
    slot.action = flow::execute_parse_error_reply(r, slot.req, lc.out);
    if (r.close) slot.action = exec_action::Close;
    if (r.error == protocol::error_kind::KeyTooLong) {
      st = dispatch_status::Done;  // the cull was all; nothing goes to a server
    } else {
      as_silent_delete(slot.req);
      slot.silent = true;  // its set was counted with the error
      slot.note_dispatch();
      slot.begin_dispatch();
      st = root.dispatch(slot, env);
    }
  } else if (r.status == protocol::parse_status::Error) {
    lc.server.counters.parse_errors.add();
    // The local store's side effects only where it is the whole tree (a
    // read-only replica's store changes only by its master's stream).
    slot.action = all_local ? lc.local->execute_parse_error(r, slot.req, env.out)
                            : flow::execute_parse_error_reply(r, slot.req, env.out);
    if (r.close) slot.action = exec_action::Close;
  } else if (is_introspection(slot.req)) {
    // `get __mcrouter__.route(get,k)` ...: answered here, on this
    // connection's root, in whichever protocol the get came (introspect.h).
    answer_introspection(slot.req, root, lc.tree, lc.server, lc.backends, slot.result, env.out);
  } else {
    const bool server_command = protocol::classify(slot.req) == protocol::command_class::Server;
    const route& target = server_command ? lc.tree->server() : root;
    if (!server_command) stats::count_mcrouter_request(slot.req, lc.server.counters);
    // Only what reaches a server takes a place in the order that a
    // retrieval sent again must keep (request_slot.h: Order).
    if (&target == &root) slot.note_dispatch();
    slot.begin_dispatch();
    st = target.dispatch(slot, env);
  }
  return true;
}

// A dispatched slot's place: Pending (waiting on servers) or Deferred (its
// reply behind earlier ones) in the in-flight queue, or its reply written
// straight into the stream (drained when full); then the ready replies at the
// head go out. Sets `action` to Close when the slot asks or a drain fails.
// [execute_input's loop; inline there]
inline void queue_dispatched(loop_context& lc, request_slot& slot, dispatch_status st, bool direct,
                             exec_action& action) {
  if (st == dispatch_status::Done) slot.abandon_dispatch();
  if (slot.action != exec_action::Continue) action = slot.action;
  if (st == dispatch_status::Pending) {
    slot.st = request_slot::state::Pending;
    lc.inflight.push_tail();
    slot.end_dispatch();  // Ready now if every call was already answered
  } else if (!direct) {
    slot.st = request_slot::state::Deferred;
    lc.inflight.push_tail();
  } else if (!flow::drain_if_full(lc.out, lc.drain)) {
    action = exec_action::Close;
  }
  if (!direct && !pop_ready(lc)) action = exec_action::Close;
}

}  // namespace

// Parses and dispatches every complete request of `input` on the tree of the
// caller's batch, pipelined (a request does not wait for the one before;
// dispatch_parsed, then queue_dispatched),
// and returns only when each has its reply in lc.out, in request order;
// returns how many bytes it used (the rest is an incomplete request). Parse
// errors get memcached's reply and, where memcached has one, its side effect
// (locally, or as a silent delete to the key's server). [a client coroutine
// or a UDP batch, on its worker; no lock; suspends in settle() while slots
// are pending] Bounds: 1,024 slots in flight and kHeldLimit bytes of held
// replies per client (it stops reading past them), each slot waited for at
// most kInflightWaitLimitMs (10 min), then the connection closes.
std::size_t execute_input(protocol::parser& parser, std::string_view input, loop_context& lc, exec_action& action) {
  std::size_t off = 0;
  std::size_t budget = lc.request_budget;  // 0: no limit
  lc.yield_due = false;
  const route& root = lc.tree->root(lc.root);
  const bool all_local = lc.tree->root_is_local(lc.root);
  const bool routes_to_servers = !lc.tree->pools().empty() && !all_local;
  // Pipelined lookups on the local store wait for memory together, not one by one.
  if (all_local && lc.local) lc.local->prefetch(input);
  while (action == exec_action::Continue && off < input.size()) {
    if (must_wait(lc) && !settle(lc, settle_until::Room)) {
      action = exec_action::Close;
      break;
    }
    request_slot* parsed = &lc.inflight.tail();
    parsed->begin_request();
    // mcrouter's pool stats time a request from its parse (pool_group_stats.h).
    if (routes_to_servers && proxy::pool_groups_on()) parsed->began_ns = mm::now_ns();
    // No slot.req.clear() here: the parsers clear it before any Ok or Error
    // (a second clear of the 600-byte request was 4% of a pipelined get).
    protocol::parse_result r = parser.parse(input.substr(off), parsed->req);
    off += r.consumed;
    // The rest is an incomplete request (or a value being swallowed).
    if (r.status == protocol::parse_status::NeedMore) break;
    // A request that must not reach its server twice (a write...) waits until
    // every retrieval before it whose reply was dropped has been sent again:
    // sent after it, that retrieval would see it (request_slot.h: Order).
    if (r.status == protocol::parse_status::Ok && lc.inflight.dropped() > 0 &&
        !protocol::can_fetch_again(parsed->req) && !settle(lc, settle_until::Resent)) {
      action = exec_action::Close;
      break;
    }
    // A long text get to servers goes out in parts; the last is this request's.
    if (r.status == protocol::parse_status::Ok && routes_to_servers && splits(parsed->req, root) &&
        !is_introspection(parsed->req) && !(parsed = split_get(lc, *parsed))) {
      action = exec_action::Close;
      break;
    }
    request_slot& slot = *parsed;
    // Nothing earlier pending: answer straight into the reply stream.
    const bool direct = lc.inflight.empty();
    lc.server.replies_pending = !direct;
    dispatch_env env{lc.local, &lc.server, direct ? lc.out : slot.deferred, lc.backends, lc.acks, lc.async};
    dispatch_status st = dispatch_status::Done;
    if (!dispatch_parsed(lc, r, slot, env, root, all_local, routes_to_servers, st)) {
      action = exec_action::Close;
      break;
    }
    queue_dispatched(lc, slot, st, direct, action);
    // memcached -R: this many requests, then the other connections' turn.
    // What is in flight stays so: the caller's next call goes on from here
    // (over the same input) and settles it (server/client.cc run_input).
    if (budget != 0 && --budget == 0 && off < input.size() && action == exec_action::Continue) {
      lc.yield_due = true;
      return off;
    }
  }
  if (!lc.inflight.empty() && !settle(lc, settle_until::Empty)) action = exec_action::Close;
  // Requests still in flight now mean the connection closes (a drain
  // failed, the client reset, cancelled): they are orphaned here, while the
  // input their requests point into (the session's read buffer, on its
  // stack) still exists; an orphan copies its keys and value out of it.
  if (!lc.inflight.empty()) lc.inflight.abandon();
  return off;
}

}  // namespace ithaca::route
