#include "l1l2_route.h"

#include <functional>

#include "command_class.h"
#include "route_util.h"

namespace ithaca::route {

l1l2_route::l1l2_route(std::string name, const route& l2, std::uint32_t exptime)
    : route(std::move(name)), l2_(l2), exptime_(exptime) {}

std::atomic<std::uint64_t>& l1l2_route::stripe(std::string_view key) const {
  return writes_[std::hash<std::string_view>{}(key) % kStripes];
}

std::uint64_t l1l2_route::writes_seen(const request_slot& slot, const request_slot& c) const {
  std::uint64_t sum = 0;
  for (const std::uint32_t i : c.key_map) sum += stripe(slot.req.keys[i]).load(std::memory_order_seq_cst);
  return sum;
}

dispatch_status l1l2_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  const protocol::request& req = slot.req;
  const bool plain_get = req.cmd == protocol::command::Get && req.proto != protocol::protocol_kind::Meta;
  if (!plain_get) {
    if (protocol::classify(req) != protocol::command_class::Flush) {
      for (std::size_t i = 0; i < req.keys.size(); ++i) {
        // Counted before L1 forgets the key: a get reading L2 meanwhile
        // does not keep what it read (resume).
        stripe(req.keys[i]).fetch_add(1, std::memory_order_seq_cst);
        if (env.local != nullptr) env.local->invalidate(req.keys[i]);
      }
    }
    return l2_.dispatch(slot, env);
  }
  if (env.local == nullptr) return l2_.dispatch(slot, env);  // a detached request: no L1
  slot.result.prepare(req);
  slot.result.outcome = protocol::routed_outcome::Hits;
  request_slot* c = nullptr;
  for (std::size_t i = 0; i < req.keys.size(); ++i) {
    if (env.local->lookup(req.keys[i], slot.result, i)) {
      route_counters::add(counters().l1_hits);
      continue;
    }
    if (c == nullptr) {
      c = &slot.child(0);
      c->req.keys.clear();
      c->key_map.clear();
    }
    c->req.keys.push_back(req.keys[i]);
    c->key_map.push_back(static_cast<std::uint32_t>(i));
  }
  // Every key from L1: answered, with no calls (ready at once, in order).
  if (c == nullptr) return dispatch_status::Pending;
  slot.push_frame(slot_frame{this, 0, 0, static_cast<std::int64_t>(writes_seen(slot, *c))});
  slot.add_call();
  dispatch_child(l2_, *c, env);
  return dispatch_status::Pending;
}

// L2's hits are kept in L1 unless a write through this route touched one
// of the keys' stripes since the get went out (its value may be older than
// the write). The stripes are read again after the fill: a write counted in
// between removes from L1 either before the fill (then seen here, and the
// fill removed) or after it.
dispatch_status l1l2_route::resume(request_slot& slot, dispatch_env& env) const {
  request_slot& c = slot.child_at(0);
  merge_hits(slot.result, c.result, c.key_map);
  if (env.local == nullptr) return dispatch_status::Done;  // resumed detached: nothing to keep
  const auto before = static_cast<std::uint64_t>(slot.top_frame().saved);
  if (writes_seen(slot, c) != before) return dispatch_status::Done;
  for (const std::uint32_t i : c.key_map) {
    const protocol::routed_result::key_hit& h = slot.result.hit(i);
    if (h.found) env.local->fill(slot.req.keys[i], h.flags, slot.result.data(h), exptime_);
  }
  if (writes_seen(slot, c) != before) {
    for (const std::uint32_t i : c.key_map) env.local->invalidate(slot.req.keys[i]);
  }
  return dispatch_status::Done;
}

}  // namespace ithaca::route
