#include "miss_failover_route.h"

#include <utility>

#include "command_class.h"
#include "route_util.h"

namespace ithaca::route {

namespace {

bool get_like(const protocol::request& r) {
  return protocol::classify(r) == protocol::command_class::Retrieve && r.cmd != protocol::command::LeaseGet;
}

}  // namespace

miss_failover_route::miss_failover_route(std::string name, std::vector<const route*> children,
                                         bool return_best_on_error)
    : route(std::move(name)), children_(std::move(children)), best_on_error_(return_best_on_error) {}

std::vector<const route*> miss_failover_route::targets_for(const protocol::request& req) const {
  if (get_like(req)) return children_;
  return {children_[0]};
}

// frame.state: the child asked last; frame.count: the child slot holding the
// best single-key reply so far (multi-key: unused).
dispatch_status miss_failover_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  if (!get_like(slot.req) || children_.size() == 1) return children_[0]->dispatch(slot, env);
  slot.push_frame(slot_frame{this, 0, 0, 0});
  if (protocol::is_multikey_retrieval(slot.req) && slot.req.keys.size() > 1) {
    slot.result.prepare(slot.req);
    request_slot& c = slot.child_for_keys(0);
    slot.add_call();
    dispatch_child(*children_[0], c, env);
  } else {
    request_slot& c = slot.child(0);
    slot.add_call();
    dispatch_child(*children_[0], c, env);
  }
  return dispatch_status::Pending;
}

dispatch_status miss_failover_route::resume(request_slot& slot, dispatch_env& env) const {
  return protocol::is_multikey_retrieval(slot.req) && slot.req.keys.size() > 1 ? resume_multi(slot, env)
                                                                              : resume_single(slot, env);
}

dispatch_status miss_failover_route::resume_single(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  request_slot& last = slot.child_at(f.state);
  const severity got = severity_of(last.result, last.req);
  if (got == severity::Success || f.state + 1 >= children_.size()) {
    // A value, or the last child: this reply, or the best one seen.
    request_slot* answer = &last;
    if (got != severity::Success && best_on_error_) {
      for (std::uint32_t i = 0; i < f.state; ++i) {
        request_slot& c = slot.child_at(i);
        if (severity_of(c.result, c.req) < severity_of(answer->result, answer->req)) answer = &c;
      }
    }
    std::swap(slot.result, answer->result);
    return dispatch_status::Done;
  }
  route_counters::add(counters().failovers);
  f.state += 1;
  request_slot& c = slot.child(f.state);
  slot.add_call();
  dispatch_child(*children_[f.state], c, env);
  return dispatch_status::Pending;
}

dispatch_status miss_failover_route::resume_multi(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  request_slot& last = slot.child_at(f.state);
  merge_hits(slot.result, last.result, last.key_map);
  const bool last_child = f.state + 1 >= children_.size();
  // The keys still missing go to the next child.
  std::vector<std::uint32_t> missing;
  for (std::size_t i = 0; i < slot.result.key_count(); ++i) {
    if (!slot.result.hit(i).found) missing.push_back(static_cast<std::uint32_t>(i));
  }
  if (missing.empty() || last_child) {
    // Failures of earlier children whose keys a later one found do not count.
    if (missing.empty()) slot.result.failed_keys = 0;
    return dispatch_status::Done;
  }
  route_counters::add(counters().failovers);
  slot.result.failed_keys = 0;
  f.state += 1;
  request_slot& c = slot.child_for_keys(f.state, missing);
  slot.add_call();
  dispatch_child(*children_[f.state], c, env);
  return dispatch_status::Pending;
}

}  // namespace ithaca::route
