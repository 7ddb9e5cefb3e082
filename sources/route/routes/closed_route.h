// The `closed` route: a replication slave that does not serve reads closes
// its clients (yrmcds does). The pooler closes new connections at accept; this
// route closes the connections a node had when it stopped being a master
// (roles by virtual IP), at their next request: no reply, the connection ends.
// Server commands (stats, version) are still answered by the request loop, so
// a monitor keeps its view of a demoted node.
#pragma once

#include "route.h"

namespace ithaca::route {

class closed_route final : public route {
 public:
  closed_route() : route("closed") {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "closed"; }
  bool answers_in_result() const override { return false; }
};

}  // namespace ithaca::route
