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

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

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
  // The index (into the pool's servers) of the server `key` goes to from
  // this worker: the live servers' ring with auto_eject_hosts and a server
  // down. [the client's worker; `backends` may be null: the pool's own ring]
  std::uint32_t server_for(std::string_view key, proxy::worker_backends* backends) const;
  // mcrouter's PoolRoute|NAME: its asynclog (with reliable_deletes), its
  // hash selection (with more than one server), the chosen server's
  // DestinationRoute line (every server for flush_all).
  void walk_handles(const protocol::request& req, handle_walk& w) const override;

 private:
  std::shared_ptr<const proxy::pool> pool_;
  bool reliable_;
};

// flush_all to every server of `pools` into `slot` (answered Pending: the
// calls fill slot.result), or refused with mcrouter's "SERVER_ERROR Command
// disabled" if one of them does not allow it. A pool route sends its own
// pool's; mcrouter's ProxyRoute every pool's (routing_prefix_route.cc).
// [the client's worker; never blocks]
dispatch_status dispatch_flush(request_slot& slot, dispatch_env& env,
                               std::span<const std::shared_ptr<const proxy::pool>> pools);

// mcrouter's DestinationRoute name of server `i` of `p`, as `route_handles`
// and `__mcrouter__.pools` print it:
// host|pool=P|id=I|ap=HOST:PORT:PROTOCOL:plain:notcompressed|timeout=Nms|keep_routing_prefix=false|msb=0
// (`ssl` for a TLS server; no failure domains: msb 0). [pure]
std::string pool_destination_name(const proxy::pool& p, std::size_t i);

}  // namespace ithaca::route
