// The `local` route: the request runs on this process's own store, at once,
// through the connection's local executor (the cache executor,
// sources/cache/). The cache role's whole tree.
#pragma once

#include "route.h"

namespace ithaca::route {

class local_route final : public route {
 public:
  local_route() : route("local") {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "local"; }
  bool answers_in_result() const override { return false; }
};

}  // namespace ithaca::route
