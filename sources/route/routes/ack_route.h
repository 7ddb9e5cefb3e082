// The `ack` route (`replication.ack: slave` on a master): wraps the local
// route so that a client's write is answered only once a slave confirmed it
// (replication/ack_state.h). Reads, and writes that changed nothing
// (NOT_STORED, NOT_FOUND, ...), are answered at once. A write that changed
// the store runs at once too, its reply is rendered into the slot, and the
// slot is parked in this worker's ack_waiters (Pending): the reply, and every
// later reply of the connection, goes out when a slave confirmed the write's
// stream position, or with kUnconfirmed after `ack_timeout`. With no slave
// attached (the change made no record) or a full ring (its record was lost)
// the write gets kUnconfirmed at once.
#pragma once

#include <cstdint>

#include "route.h"

namespace ithaca::route {

class ack_route final : public route {
 public:
  ack_route(const route& child, std::uint64_t timeout_ms) : route("ack"), child_(child), timeout_ms_(timeout_ms) {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "ack"; }
  bool answers_in_result() const override { return false; }
  std::vector<const route*> children() const override { return {&child_}; }
  const route& child() const { return child_; }

 private:
  const route& child_;  // the local route
  std::uint64_t timeout_ms_;
};

}  // namespace ithaca::route
