// The `pool` route: each key goes to the server of the pool that holds it
// (the pool's hash and distribution); a multi-key get is split per server,
// the parts sent in parallel and merged back in the client's key order.
// flush_all reaches every server, if the pool allows it.
//
// reliable_deletes (mcrouter's asynclog, on by default for an mcrouter
// PoolRoute): a delete its server could not take (no reply: down, timeout,
// connection error, queue full) goes to the server's spool
// (proxy/delete_spool.h) and is replayed when the server is back. The client
// then gets NOT_FOUND, as mcrouter answers a spooled delete (its DefaultReply
// for a delete), once the record is in the spool file (the request stays
// Pending until then: proxy/spool_waits.h); a delete the spool could not
// take or write (its bound, an unwritable directory, no answer within the
// pool's timeout) gets the failure as usual. NOT_FOUND or an error line from
// the server is an answer, never spooled.
#pragma once

#include <memory>

#include "pool.h"
#include "route.h"

namespace ithaca::route {

class pool_route final : public route {
 public:
  pool_route(std::string name, std::shared_ptr<const proxy::pool> pool, bool reliable_deletes = false);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  // [reliable_deletes] A delete's call is done: spool it if it got no reply
  // (Pending until the spool has written it); then answer by the outcome.
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  bool reliable_deletes() const { return reliable_; }
  const char* kind() const override { return "pool"; }
  const proxy::pool& pool() const { return *pool_; }
  const std::shared_ptr<const proxy::pool>& shared_pool() const { return pool_; }

 private:
  std::shared_ptr<const proxy::pool> pool_;
  bool reliable_;
};

}  // namespace ithaca::route
