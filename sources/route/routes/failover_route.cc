#include "failover_route.h"

#include <algorithm>
#include <ctime>

#include "command_class.h"

namespace ithaca::route {

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
  dispatch_child(*children_[0], slot, env);
  return dispatch_status::Pending;
}

// A reply that does not fail over ends the route where it arrives.
bool failover_route::wants_resume(const request_slot& slot, const slot_frame& f) const {
  const auto cls = static_cast<std::size_t>(protocol::operation_of(slot.req));
  if (f.state + 1 >= children_.size() || !fails_over(slot.result, errors_[cls])) return false;
  // The gutter takes no deletes: its values expire instead.
  return !(gutter_ && protocol::classify(slot.req) == protocol::command_class::Delete);
}

dispatch_status failover_route::resume(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  const std::size_t next = f.state + 1;
  if (!wants_resume(slot, f)) return dispatch_status::Done;
  if (feed_ > 0) {
    std::int64_t t = tokens_.load(std::memory_order_relaxed);
    do {
      if (t < 1000) {
        route_counters::add(counters().failover_limited);
        return dispatch_status::Done;
      }
    } while (!tokens_.compare_exchange_weak(t, t - 1000, std::memory_order_relaxed));
  }
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

}  // namespace ithaca::route
