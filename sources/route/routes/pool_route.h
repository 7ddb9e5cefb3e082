// The `pool` route: each key goes to the server of the pool that holds it
// (the pool's hash and distribution); a multi-key get is split per server,
// the parts sent in parallel and merged back in the client's key order.
// flush_all reaches every server, if the pool allows it.
#pragma once

#include <memory>

#include "pool.h"
#include "route.h"

namespace ithaca::route {

class pool_route final : public route {
 public:
  pool_route(std::string name, std::shared_ptr<const proxy::pool> pool);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "pool"; }
  const proxy::pool& pool() const { return *pool_; }
  const std::shared_ptr<const proxy::pool>& shared_pool() const { return pool_; }

 private:
  std::shared_ptr<const proxy::pool> pool_;
};

}  // namespace ithaca::route
