// The `all_*` routes: one request to every child at once.
//   all_sync      waits for every child; answers the worst reply (mcrouter's
//                 AllSyncRoute: an error over a miss over a success)
//   all_async     answers at once as the null route does (a get misses, a
//                 store is NOT_STORED); the children's requests are detached
//                 and run in the background, bounded per worker
//                 (async_runner.h), their replies dropped (AllAsyncRoute)
//   all_initial   answers the first child's reply; the others are detached
//                 (AllInitialRoute)
//   all_majority  answers once more than half of the children agree on how
//                 a reply went (success, miss, error, failure), with the
//                 first such reply; or, when no class can get a majority any
//                 more, the worst reply; stragglers finish detached
//                 (AllMajorityRoute)
//   all_fastest   answers the first reply that is not an error; if every
//                 child fails, the last error; stragglers finish detached
//                 (AllFastestRoute)
// Each child has a child slot of its own (flow::request_slot::child); a
// straggler still out when the answer is chosen is handed to the worker's
// async runner with a copy of its request, so a write still reaches every
// replica.
#include <array>
#include <utility>
#include <vector>

#include "async_runner.h"
#include "route.h"
#include "route_kind.h"
#include "route_util.h"

namespace ithaca::route {

namespace {

enum class all_policy : std::uint8_t { Sync, Async, Initial, Majority, Fastest };

class all_route final : public route {
 public:
  all_route(std::string name, std::vector<const route*> children, all_policy policy);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  bool child_answered(request_slot& parent, request_slot& child) const override;
  const char* kind() const override;
  std::vector<const route*> children() const override { return children_; }

 private:
  // Sends children [from, end) as detached requests (all_async, all_initial).
  void send_detached(request_slot& slot, dispatch_env& env, std::size_t from) const;
  std::vector<const route*> children_;
  all_policy policy_;
};

}  // namespace

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
    case all_policy::Initial: send_detached(slot, env, 1); return children_[0]->dispatch(slot, env);
    default: break;
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

// ---- the kinds: one per policy, each a list of children.

namespace {

constexpr config::child_slot kAllSlots[] = {
    {"", "children", "children", true, 1},
};
std::shared_ptr<config::route_options> no_options(config::route_format) {
  return std::make_shared<config::route_options>();
}

template <all_policy P>
const route* build_all(tree_builder& b, const config::route_config& r) {
  std::vector<const route*> children;
  if (!b.children(r, "", true, 1, children)) return nullptr;
  return b.add<all_route>(b.name_of(r), std::move(children), P);
}

constexpr auto kEmptyIsNull = config::route_kind_info::collapse::EmptyIsNull;
constexpr config::route_kind_info kSync{
    "all_sync", "AllSyncRoute", "every child; waits for all, the worst reply", kAllSlots, {}, no_options, kEmptyIsNull};
constexpr config::route_kind_info kAsync{"all_async", "AllAsyncRoute", "every child; answers at once", kAllSlots, {},
                                         no_options,  kEmptyIsNull};
constexpr config::route_kind_info kInitial{
    "all_initial", "AllInitialRoute", "every child; the first child's reply", kAllSlots, {}, no_options, kEmptyIsNull};
constexpr config::route_kind_info kMajority{
    "all_majority", "AllMajorityRoute", "every child; the reply of a majority", kAllSlots, {},
    no_options,     kEmptyIsNull};
constexpr config::route_kind_info kFastest{
    "all_fastest", "AllFastestRoute", "every child; the first reply that is not an error", kAllSlots, {},
    no_options,    kEmptyIsNull};

}  // namespace

extern constinit const kind_module kAllSyncKind{kSync, build_all<all_policy::Sync>};
extern constinit const kind_module kAllAsyncKind{kAsync, build_all<all_policy::Async>};
extern constinit const kind_module kAllInitialKind{kInitial, build_all<all_policy::Initial>};
extern constinit const kind_module kAllMajorityKind{kMajority, build_all<all_policy::Majority>};
extern constinit const kind_module kAllFastestKind{kFastest, build_all<all_policy::Fastest>};

}  // namespace ithaca::route
