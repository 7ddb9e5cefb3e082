// `watch evictions`: the store's eviction_observer, turning an evicted item
// into memcached's type=eviction line (ttl and la in seconds from now, from
// the server clock). Set on the store at start-up, both roles' stores alike.
// [whichever thread evicts, under the item's bucket lock: it only formats and
// pushes a line, and returns at once when nobody watches evictions]
#pragma once

#include "server_clock.h"
#include "store_types.h"

namespace ithaca::server {

class watch_evictions final : public store::eviction_observer {
 public:
  explicit watch_evictions(const server_clock& clock) : clock_(clock) {}
  void on_evict(const store::evicted_item& item) noexcept override;

 private:
  const server_clock& clock_;
};

}  // namespace ithaca::server
