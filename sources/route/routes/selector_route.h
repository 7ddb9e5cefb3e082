// What the selecting kinds share (prefix, operation, hash, random): each
// request goes to one of several targets, picked from the request or its
// key. Nothing waits in the selector itself, except when a multi-key get's
// keys pick different targets (prefix and hash select by key): the keys are
// then split into one child request per target, sent at once, and their hits
// merged back in the client's key order when all have answered.
#pragma once

#include <string_view>
#include <vector>

#include "route.h"

namespace ithaca::route {

class selector_route : public route {
 public:
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  std::vector<const route*> children() const override { return targets_; }
  // The target pick() chooses for the request's (first) key.
  std::vector<const route*> targets_for(const protocol::request& req) const override;
  // A selector answers as its targets do: into the result only if all do.
  bool answers_in_result() const override;

 protected:
  // `by_key`: pick() looks at the key, so a multi-key get may be split.
  selector_route(std::string name, std::vector<const route*> targets, bool by_key);
  // The target (an index into targets) for `req`, or for one of its keys.
  virtual std::size_t pick(const protocol::request& req, std::string_view key) const = 0;
  const std::vector<const route*>& targets() const { return targets_; }

 private:
  std::vector<const route*> targets_;
  bool by_key_;
};

}  // namespace ithaca::route
