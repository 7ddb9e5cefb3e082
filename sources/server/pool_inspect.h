// The router role's answers to the commands only its pools can answer:
// `stats items`, `stats slabs` (flow/pool_stats.h), `lru_crawler
// metadump|mgdump` and `stats cachedump` (flow/item_dump.h), so
// memcached-tool's `display` and `dump` work against a router as against a
// memcached. (memcached's own proxy answers these from its local cache,
// empty in front of pools; the class ids `stats items` shows through the
// router are the servers', so cachedump asks the servers too.) Each server of the
// pools (a server two pools share, once) is asked on a connection of its
// own (proxy/server_query.h), one after another: the stats answers are
// merged (flow/class_stats_merge.h); the dump's lines are passed on as they
// come, the servers' one after another, under one OK and one END (EN).
// A server that does not answer is left out and logged (a dump shows the
// others' keys); a crawler busy with another request is asked again for up
// to kBusyRetryMs.
//
// Thread: the client coroutine that asked, on its worker; it suspends while
// the servers answer. One per client session; it reads the tree and the
// drain of the session's loop_context at each call, so a reload's tree is
// the one asked.
#pragma once

#include <string_view>
#include <vector>

#include "item_dump.h"
#include "pool_stats.h"
#include "request_loop.h"

namespace ithaca::proxy {
class backend_server;
}

namespace ithaca::server {

class pool_inspect final : public stats::pool_stats_source, public commands::item_dump_source {
 public:
  explicit pool_inspect(const route::loop_context& loop) : loop_(loop) {}

  bool collect(std::string_view group, stats::stat_lines& out) override;
  bool dump(commands::dump_format format, const commands::class_set& classes, protocol::out_buffer& out) override;
  // Each server's ITEM lines of the class, one server after another, until
  // `limit` lines (0: none) or commands::kCachedumpBytes; one END. A server that
  // refuses (its -X) or fails is left out and logged.
  bool cachedump(unsigned cls, unsigned limit, protocol::out_buffer& out) override;

  // How long a dump asks again a server whose crawler is busy ("BUSY").
  static constexpr mm::millis kBusyRetryMs = 2000;

 private:
  // Every server of the tree's pools, each address once, in the pools' order.
  std::vector<const proxy::backend_server*> servers() const;

  const route::loop_context& loop_;
};

}  // namespace ithaca::server
