// The local store as the l1l2 route's L1 (flow::local_executor's lookup,
// fill, invalidate): plain store calls, no reply and no command counters
// (the client's request is counted by the route, its reply by the router).
// [the connection's coroutine; the bucket lock is held only inside each
// store call, and a temp-file value is read after it, through take_value]
#include "exec_value.h"
#include "executor.h"

namespace ithaca::cache {

bool exec_context::lookup(std::string_view key, protocol::routed_result& result, std::size_t index) {
  store::get_options opts = pinned_get_options();
  opts.count = false;  // the routed request is counted by its outcome (flow/routed_counts.h)
  store::get_result& res = scratch_get_result();
  store.get(key, now, opts, res);
  if (res.status != store::get_status::Hit) return false;
  const uint32_t flags = res.flags;
  value_bytes v;
  if (!take_value(res, v)) return false;    // temp file unreadable: a miss
  result.set_hit(index, flags, 0, v.data);  // copied: v.owner may go
  return true;
}

void exec_context::fill(std::string_view key, std::uint32_t flags, std::string_view value, std::int64_t ttl) {
  store::store_result res;
  store.set(key, store::store_mode::Set, value, flags, ttl, now, store::store_options{}, res);
  // Not kept (too large, out of memory): the old value must not stay either.
  if (res.status != store::store_status::Stored) store.remove(key, now);
}

void exec_context::invalidate(std::string_view key) { store.remove(key, now); }

}  // namespace ithaca::cache
