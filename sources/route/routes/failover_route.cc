#include "failover_route.h"

#include <algorithm>
#include <ctime>

#include "command_class.h"

namespace ithaca::route {

namespace {

// A text get of several keys: asked per child slot, failed keys alone onward.
bool multi_get(const protocol::request& req) {
  return protocol::is_multikey_retrieval(req) && req.keys.size() > 1;
}

}  // namespace

failover_route::failover_route(std::string name, std::vector<const route*> children, options opts)
    : route(std::move(name)),
      children_(std::move(children)),
      errors_(opts.errors),
      feed_(static_cast<std::int64_t>(opts.limit_rate * 1000)),
      cap_(static_cast<std::int64_t>(opts.limit_burst * 1000)),
      tokens_(cap_),
      gutter_(opts.gutter),
      exptime_(opts.exptime) {}

dispatch_status failover_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  if (feed_ > 0) {
    std::int64_t t = tokens_.load(std::memory_order_relaxed);
    while (t < cap_ && !tokens_.compare_exchange_weak(t, std::min(cap_, t + feed_), std::memory_order_relaxed)) {
    }
  }
  slot.push_frame(slot_frame{this, 0, 0, 0});
  if (multi_get(slot.req) && children_.size() > 1) {
    // frame.state: the child asked last. Hits gather in slot.result.
    slot.result.prepare(slot.req);
    request_slot& c = slot.child_for_keys(0);
    slot.add_call();
    dispatch_child(*children_[0], c, env);
    return dispatch_status::Pending;
  }
  dispatch_child(*children_[0], slot, env);
  return dispatch_status::Pending;
}

// A reply that does not fail over ends the route where it arrives. (A
// multi-key get always comes back: its child's hits are merged in resume.)
bool failover_route::wants_resume(const request_slot& slot, const slot_frame& f) const {
  if (multi_get(slot.req) && children_.size() > 1) return true;
  const auto cls = static_cast<std::size_t>(protocol::operation_of(slot.req));
  if (f.state + 1 >= children_.size() || !fails_over(slot.result, errors_[cls])) return false;
  // The gutter takes no deletes: its values expire instead.
  return !(gutter_ && protocol::classify(slot.req) == protocol::command_class::Delete);
}

bool failover_route::take_token() const {
  if (feed_ <= 0) return true;
  std::int64_t t = tokens_.load(std::memory_order_relaxed);
  do {
    if (t < 1000) {
      route_counters::add(counters().failover_limited);
      return false;
    }
  } while (!tokens_.compare_exchange_weak(t, t - 1000, std::memory_order_relaxed));
  return true;
}

dispatch_status failover_route::resume(request_slot& slot, dispatch_env& env) const {
  if (multi_get(slot.req) && children_.size() > 1) return resume_multi(slot, env);
  slot_frame& f = slot.top_frame();
  const std::size_t next = f.state + 1;
  if (!wants_resume(slot, f)) return dispatch_status::Done;
  if (!take_token()) return dispatch_status::Done;
  route_counters::add(counters().failovers);
  if (gutter_ && carries_exptime(slot.req)) {
    cap_exptime(slot.req, exptime_, static_cast<std::int64_t>(std::time(nullptr)));
    if (protocol::classify(slot.req) == protocol::command_class::Store) route_counters::add(counters().gutter_writes);
  }
  f.state = static_cast<std::uint32_t>(next);
  slot.release_reply();  // the next child prepares the result again
  dispatch_child(*children_[next], slot, env);
  return dispatch_status::Pending;
}

// The child asked last has answered: its hits join the others; the keys
// whose server failed (if its errors fail over) go to the next child alone.
dispatch_status failover_route::resume_multi(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  request_slot& last = slot.child_at(f.state);
  const auto cls = static_cast<std::size_t>(protocol::operation_of(slot.req));
  const bool onward = f.state + 1 < children_.size() && fails_over(last.result, errors_[cls]);
  merge_hits(slot.result, last.result, last.key_map);
  if (!onward) return dispatch_status::Done;
  std::vector<std::uint32_t> failed;
  for (std::size_t i = 0; i < slot.result.key_count(); ++i) {
    if (slot.result.hit(i).failed && !slot.result.hit(i).found) failed.push_back(static_cast<std::uint32_t>(i));
  }
  if (failed.empty() || !take_token()) return dispatch_status::Done;
  route_counters::add(counters().failovers);
  // Asked again: no longer failed unless the next child fails them too.
  for (const std::uint32_t i : failed) slot.result.set_failed(i, false);
  slot.result.failed_keys -= std::min<std::uint32_t>(slot.result.failed_keys, static_cast<std::uint32_t>(failed.size()));
  f.state += 1;
  request_slot& c = slot.child_for_keys(f.state, failed);
  // gat / gats into the gutter: their new TTL capped as any gutter write.
  if (gutter_ && carries_exptime(c.req)) cap_exptime(c.req, exptime_, static_cast<std::int64_t>(std::time(nullptr)));
  slot.add_call();
  dispatch_child(*children_[f.state], c, env);
  return dispatch_status::Pending;
}

}  // namespace ithaca::route
