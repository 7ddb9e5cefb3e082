// The `read_only` route: reads go to the child route; writes (stores,
// arithmetic, deletes, touches, flushes, lease-gets that would create a
// placeholder, meta commands that modify) are refused with
// `SERVER_ERROR read-only replica: writes go to the master` (binary: 0x0083
// Not supported), even with noreply: a client must learn that its write was
// not applied. A replication slave with `serve_reads: true` serves its clients
// through it, so no client can make it diverge from its master; its stream
// applier writes to the store directly.
#pragma once

#include "route.h"

namespace ithaca::route {

class read_only_route final : public route {
 public:
  explicit read_only_route(const route& child) : route("read_only"), child_(child) {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "read_only"; }
  bool answers_in_result() const override { return false; }
  std::vector<const route*> children() const override { return {&child_}; }

 private:
  const route& child_;
};

}  // namespace ithaca::route
