#include "l1l2_route.h"

#include "command_class.h"
#include "route_util.h"

namespace ithaca::route {

l1l2_route::l1l2_route(std::string name, const route& l2, std::uint32_t exptime)
    : route(std::move(name)), l2_(l2), exptime_(exptime) {}

dispatch_status l1l2_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  const protocol::request& req = slot.req;
  if (env.local == nullptr) return l2_.dispatch(slot, env);  // a detached request: no L1
  const bool plain_get = req.cmd == protocol::command::Get && req.proto != protocol::protocol_kind::Meta;
  if (!plain_get) {
    if (protocol::classify(req) != protocol::command_class::Flush) {
      for (std::size_t i = 0; i < req.keys.size(); ++i) env.local->invalidate(req.keys[i]);
    }
    return l2_.dispatch(slot, env);
  }
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
  slot.push_frame(slot_frame{this, 0, 0, 0});
  slot.add_call();
  dispatch_child(l2_, *c, env);
  return dispatch_status::Pending;
}

dispatch_status l1l2_route::resume(request_slot& slot, dispatch_env& env) const {
  request_slot& c = slot.child_at(0);
  merge_hits(slot.result, c.result, c.key_map);
  if (env.local == nullptr) return dispatch_status::Done;  // resumed detached: nothing to keep
  for (const std::uint32_t i : c.key_map) {
    const protocol::routed_result::key_hit& h = slot.result.hit(i);
    if (h.found) env.local->fill(slot.req.keys[i], h.flags, slot.result.data(h), exptime_);
  }
  return dispatch_status::Done;
}

}  // namespace ithaca::route
