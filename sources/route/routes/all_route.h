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
#pragma once

#include <vector>

#include "route.h"

namespace ithaca::route {

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

}  // namespace ithaca::route
