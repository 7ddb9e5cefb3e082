#include "all_route.h"

#include <array>
#include <utility>

#include "async_runner.h"
#include "route_util.h"

namespace ithaca::route {

all_route::all_route(std::string name, std::vector<const route*> children, all_policy policy)
    : route(std::move(name)), children_(std::move(children)), policy_(policy) {}

const char* all_route::kind() const {
  switch (policy_) {
    case all_policy::Sync: return "all_sync";
    case all_policy::Async: return "all_async";
    case all_policy::Initial: return "all_initial";
    case all_policy::Majority: return "all_majority";
    case all_policy::Fastest: return "all_fastest";
  }
  return "all";
}

void all_route::send_detached(request_slot& slot, dispatch_env& env, std::size_t from) const {
  for (std::size_t i = from; i < children_.size(); ++i) {
    if (env.async != nullptr && env.async->send(*children_[i], slot.req)) {
      route_counters::add(counters().async_sent);
    } else {
      route_counters::add(counters().async_dropped);
    }
  }
}

dispatch_status all_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  switch (policy_) {
    case all_policy::Async:
      send_detached(slot, env, 0);
      default_reply(slot.req, slot.result);
      return dispatch_status::Pending;  // no calls: ready at once, in order
    case all_policy::Initial:
      send_detached(slot, env, 1);
      return children_[0]->dispatch(slot, env);
    default:
      break;
  }
  slot.push_frame(slot_frame{this, 0, 0, 0});
  const bool some = policy_ == all_policy::Majority || policy_ == all_policy::Fastest;
  if (some) {
    slot.wait_for_some();
    slot.add_call();  // released by child_answered once enough have answered
  }
  for (std::size_t i = 0; i < children_.size(); ++i) {
    request_slot& c = slot.child(i);
    if (!some) slot.add_call();
    dispatch_child(*children_[i], c, env);
  }
  return dispatch_status::Pending;
}

// [where a child finishes] Majority and fastest only. frame.count: children
// answered so far.
bool all_route::child_answered(request_slot& parent, request_slot& child) const {
  slot_frame& f = parent.top_frame();
  f.count += 1;
  const std::size_t n = children_.size();
  if (f.count >= n) return true;
  if (policy_ == all_policy::Fastest) return severity_of(child.result, child.req) <= severity::Miss;
  // Majority: some class of reply has more than half, or none can any more.
  std::array<std::size_t, 4> votes{};
  for (std::size_t i = 0; i < parent.children_in_use(); ++i) {
    if (!parent.child_answered(i)) continue;
    request_slot& c = parent.child_at(i);
    votes[static_cast<std::size_t>(severity_of(c.result, c.req))] += 1;
  }
  const std::size_t left = n - f.count;
  bool possible = false;
  for (const std::size_t v : votes) {
    if (2 * v > n) return true;
    if (2 * (v + left) > n) possible = true;
  }
  return !possible;
}

dispatch_status all_route::resume(request_slot& slot, dispatch_env& env) const {
  const std::size_t n = slot.children_in_use();
  request_slot* answer = nullptr;
  if (policy_ == all_policy::Sync) {
    for (std::size_t i = 0; i < n; ++i) {
      request_slot& c = slot.child_at(i);
      if (answer == nullptr || severity_of(c.result, c.req) > severity_of(answer->result, answer->req)) answer = &c;
    }
  } else {
    std::array<std::size_t, 4> votes{};
    for (std::size_t i = 0; i < n; ++i) {
      if (!slot.child_answered(i)) continue;
      request_slot& c = slot.child_at(i);
      votes[static_cast<std::size_t>(severity_of(c.result, c.req))] += 1;
    }
    for (std::size_t i = 0; i < n && answer == nullptr; ++i) {
      if (!slot.child_answered(i)) continue;
      request_slot& c = slot.child_at(i);
      const severity s = severity_of(c.result, c.req);
      if (policy_ == all_policy::Fastest ? s <= severity::Miss
                                         : 2 * votes[static_cast<std::size_t>(s)] > children_.size()) {
        answer = &c;
      }
    }
    if (answer == nullptr) {
      // No majority (or every child failed): the worst reply.
      for (std::size_t i = 0; i < n; ++i) {
        if (!slot.child_answered(i)) continue;
        request_slot& c = slot.child_at(i);
        if (answer == nullptr || severity_of(c.result, c.req) > severity_of(answer->result, answer->req)) {
          answer = &c;
        }
      }
    }
    // The stragglers finish in the background: a write reaches every child.
    for (std::size_t i = 0; i < n; ++i) {
      if (slot.child_answered(i)) continue;
      if (env.async != nullptr) {
        env.async->adopt(slot.release_child(i));
        route_counters::add(counters().async_sent);
      }
    }
  }
  if (answer != nullptr) std::swap(slot.result, answer->result);
  return dispatch_status::Done;
}

}  // namespace ithaca::route
