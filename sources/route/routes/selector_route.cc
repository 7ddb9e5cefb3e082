#include "selector_route.h"

#include "command_class.h"
#include "route_util.h"

namespace ithaca::route {

selector_route::selector_route(std::string name, std::vector<const route*> targets, bool by_key)
    : route(std::move(name)), targets_(std::move(targets)), by_key_(by_key) {}

bool selector_route::answers_in_result() const {
  for (const route* t : targets_) {
    if (!t->answers_in_result()) return false;
  }
  return true;
}

std::vector<const route*> selector_route::targets_for(const protocol::request& req) const {
  return {targets_[pick(req, req.key())]};
}

dispatch_status selector_route::dispatch(request_slot& slot, dispatch_env& env) const {
  counters().requests.fetch_add(1, std::memory_order_relaxed);
  const protocol::request& req = slot.req;
  const std::size_t first = pick(req, req.key());
  const std::size_t n = req.keys.size();
  if (!by_key_ || n <= 1 || !protocol::is_multikey_retrieval(req) || !answers_in_result()) {
    return targets_[first]->dispatch(slot, env);
  }
  // Group the keys by target; most gets keep to one.
  std::vector<std::uint32_t>& target_of = slot.server_of;
  target_of.resize(n);
  bool one = true;
  for (std::size_t i = 0; i < n; ++i) {
    target_of[i] = static_cast<std::uint32_t>(i == 0 ? first : pick(req, req.keys[i]));
    one = one && target_of[i] == first;
  }
  if (one) return targets_[first]->dispatch(slot, env);
  slot.result.prepare(req);
  slot.push_frame(slot_frame{this, 0, 0, 0});
  std::size_t used = 0;
  for (std::size_t t = 0; t < targets_.size(); ++t) {
    request_slot* c = nullptr;
    for (std::size_t i = 0; i < n; ++i) {
      if (target_of[i] != t) continue;
      if (c == nullptr) {
        c = &slot.child(used++);
        c->req.keys.clear();
        c->key_map.clear();
      }
      c->req.keys.push_back(req.keys[i]);
      c->key_map.push_back(static_cast<std::uint32_t>(i));
    }
    if (c == nullptr) continue;
    slot.add_call();  // the child's answer, as one call of this slot
    dispatch_child(*targets_[t], *c, env);
  }
  return dispatch_status::Pending;
}

dispatch_status selector_route::resume(request_slot& slot, dispatch_env&) const {
  for (std::size_t i = 0; i < slot.children_in_use(); ++i) {
    request_slot& c = slot.child_at(i);
    merge_hits(slot.result, c.result, c.key_map);
  }
  return dispatch_status::Done;
}

}  // namespace ithaca::route
