// The executor's `watch` events (flow/watch_events.h): what memcached's
// do_item_get, do_store_item and delete paths log, with this connection's
// id as cfd. Each costs one relaxed load when nobody watches its kind; the
// extra lookups some need (a store's or a delete's item, which memcached
// logs as it looks the key up) are made only while someone watches.
// [the client coroutine; store calls take bucket locks only inside the store]
#pragma once

#include <string_view>

#include "executor.h"
#include "watch_events.h"

namespace ithaca::cache {

// item_get for a lookup's result (get, gets, gat, gats, mg). The check is
// inline: every lookup makes it.
void log_fetch(std::string_view key, const store::get_result& res, exec_context& ctx);
inline void watch_fetch(std::string_view key, const store::get_result& res, exec_context& ctx) {
  if (stats::watch::watching(stats::watch::kFetchers)) log_fetch(key, res, ctx);
}

// What a write is about to change, looked up only while fetchers or
// deletions are watched; the lookup is logged as an item_get, as memcached's
// own lookup in the write is.
struct watch_before {
  bool found = false;
  uint32_t flags = 0;
  uint64_t size = 0;
  unsigned slab_class = 0;  // memcached's size class of the item found (0: none)
};
watch_before watch_lookup(std::string_view key, exec_context& ctx);

// item_store after a store (set add replace append prepend cas ms). Its
// size is the stored value's (the whole after an append), else the request's.
void watch_stored(std::string_view key, store::store_mode mode, const store::store_result& res, int64_t exptime,
                  uint32_t flags, uint64_t request_size, exec_context& ctx);

// deleted after a delete or md that removed the item.
void watch_deleted(std::string_view key, std::string_view cmd, const watch_before& before);

}  // namespace ithaca::cache
