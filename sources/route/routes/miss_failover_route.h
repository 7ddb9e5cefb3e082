// The `miss_failover` route (mcrouter's MissFailoverRoute): a get-like
// request (get, gets, gat, gats, mg, binary get) tries the children in order
// until one has the value; any other request goes to the first child only.
// A multi-key get asks each next child only for the keys still missing and
// merges what it finds, in the client's key order. When no child has a
// single-key value, the best reply seen is returned (a miss over an error:
// return_best_on_error), or the last child's.
#pragma once

#include <vector>

#include "route.h"

namespace ithaca::route {

class miss_failover_route final : public route {
 public:
  miss_failover_route(std::string name, std::vector<const route*> children, bool return_best_on_error);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "miss_failover"; }
  std::vector<const route*> children() const override { return children_; }
  // A get tries every child while they miss; anything else the first.
  std::vector<const route*> targets_for(const protocol::request& req) const override;

 private:
  dispatch_status resume_single(request_slot& slot, dispatch_env& env) const;
  dispatch_status resume_multi(request_slot& slot, dispatch_env& env) const;
  std::vector<const route*> children_;
  bool best_on_error_;
};

}  // namespace ithaca::route
