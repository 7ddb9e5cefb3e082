// The local store's `lru_crawler metadump` / `mgdump` and `stats cachedump`
// (flow/item_dump.h): memcached 1.6.45's lines for every live item of the
// asked classes, walked
// bucket range by bucket range (one bucket lock at a time, lines formatted
// under it into a small buffer, never a suspension under a lock), handed to
// the client through its reply drain as they accumulate, and the worker's
// other coroutines run between ranges.
//
// Thread: the client coroutine that asked; one per connection (it refers to
// the connection's exec_context for the store, the time and the drain).
#pragma once

#include <string>

#include "executor.h"
#include "item_dump.h"

namespace ithaca::cache {

class store_dump final : public commands::item_dump_source {
 public:
  explicit store_dump(exec_context& ctx) : ctx_(ctx) {}
  bool dump(commands::dump_format format, const commands::class_set& classes, protocol::out_buffer& out) override;
  // The whole table is walked (there is no LRU per class to start from); what
  // is kept on the way is bounded by the answer: the newest `limit` items (by
  // store order, memcached's COLD LRU order for items never read) whose
  // lines fit in commands::kCachedumpBytes, so at most 2 MB of lines are held.
  bool cachedump(unsigned cls, unsigned limit, protocol::out_buffer& out) override;

 private:
  exec_context& ctx_;
  std::string lines_;  // one bucket range's lines (kept for its capacity)
};

}  // namespace ithaca::cache
