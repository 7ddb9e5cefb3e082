#include "exec_watch.h"

#include "exec_value.h"
#include "store_time.h"
#include "watch_events.h"

namespace ithaca::cache {

namespace watch = stats::watch;

namespace {

std::string_view status_name(store::store_status s) {
  switch (s) {
    case store::store_status::Stored: return "stored";
    case store::store_status::NotStored: return "not_stored";
    case store::store_status::Exists: return "exists";
    case store::store_status::NotFound: return "not_found";
    case store::store_status::TooLarge: return "too_large";
    case store::store_status::OutOfMemory: return "no_memory";
    case store::store_status::BadKey: return {};
  }
  return {};
}

std::string_view mode_name(store::store_mode m) {
  switch (m) {
    case store::store_mode::Set: return "set";
    case store::store_mode::Add: return "add";
    case store::store_mode::Replace: return "replace";
    case store::store_mode::Append: return "append";
    case store::store_mode::Prepend: return "prepend";
    case store::store_mode::Cas: return "cas";
  }
  return "na";
}

// memcached's ttl= of a store: the seconds left (0: none), from the exptime
// as sent (relative, or an absolute unix time past 30 days).
int64_t watch_ttl_of(int64_t exptime, const store::store_now& now) {
  if (exptime <= 0) return 0;
  if (exptime <= store::kMaxRelativeExptime) return exptime;
  const int64_t unix_now = now.wall_base + static_cast<int64_t>(now.ms / 1000);
  return exptime > unix_now ? exptime - unix_now : 0;
}

}  // namespace

void log_fetch(std::string_view key, const store::get_result& res, exec_context& ctx) {
  const bool found = res.status == store::get_status::Hit;
  const uint64_t size = found ? res.value_size : 0;
  watch::item_get(key, found, found ? ctx.store.classes().item_class(key.size(), res.flags, size) : 0, ctx.conn_id,
                  size);
}

watch_before watch_lookup(std::string_view key, exec_context& ctx) {
  watch_before b;
  if (!watch::watching(watch::kFetchers | watch::kDeletions)) return b;
  store::get_options peek;
  peek.want_value = false;
  peek.bump = false;
  store::get_result& res = scratch_get_result();
  ctx.store.get(key, ctx.now, peek, res);
  res.large.reset();
  b.found = res.status == store::get_status::Hit;
  b.flags = b.found ? res.flags : 0;
  b.size = b.found ? res.value_size : 0;
  b.slab_class = b.found ? ctx.store.classes().item_class(key.size(), b.flags, b.size) : 0;
  watch::item_get(key, b.found, b.slab_class, ctx.conn_id, b.size);
  return b;
}

void watch_stored(std::string_view key, store::store_mode mode, const store::store_result& res, int64_t exptime,
                  uint32_t flags, uint64_t request_size, exec_context& ctx) {
  if (!watch::watching(watch::kMutations)) return;
  const std::string_view st = status_name(res.status);
  if (st.empty()) return;
  const uint64_t value_size = res.status == store::store_status::Stored ? res.value_size : request_size;
  watch::item_store(key, st, mode_name(mode), watch_ttl_of(exptime, ctx.now),
                    ctx.store.classes().item_class(key.size(), flags, value_size), ctx.conn_id, value_size);
}

void watch_deleted(std::string_view key, std::string_view cmd, const watch_before& before) {
  if (!watch::watching(watch::kDeletions)) return;
  watch::deleted(key, cmd, before.slab_class, before.size);
}

}  // namespace ithaca::cache
