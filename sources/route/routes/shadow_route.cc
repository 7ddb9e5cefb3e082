#include "shadow_route.h"

#include <random>

#include "async_runner.h"
#include "command_class.h"
#include "route_util.h"

namespace ithaca::route {

shadow_route::shadow_route(std::string name, const route& normal, std::vector<shadow_target> shadows)
    : route(std::move(name)), normal_(normal), shadows_(std::move(shadows)) {}

std::vector<const route*> shadow_route::children() const {
  std::vector<const route*> out{&normal_};
  for (const shadow_target& s : shadows_) out.push_back(s.target);
  return out;
}

std::vector<const route*> shadow_route::targets_for(const protocol::request& req) const {
  std::vector<const route*> out{&normal_};
  const protocol::command_class c = protocol::classify(req);
  if (c == protocol::command_class::Flush || c == protocol::command_class::Debug || req.keys.empty()) return out;
  const double where = key_fraction(req.key());
  for (const shadow_target& s : shadows_) {
    if (where >= s.key_lo && where < s.key_hi && s.request_fraction > 0) out.push_back(s.target);
  }
  return out;
}

dispatch_status shadow_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  const protocol::request& req = slot.req;
  // Data commands only: flush_all and me are not mirrored.
  const protocol::command_class c = protocol::classify(req);
  if (c != protocol::command_class::Flush && c != protocol::command_class::Debug && !req.keys.empty()) {
    const double where = key_fraction(req.key());
    thread_local std::minstd_rand rng{std::random_device{}()};
    for (const shadow_target& s : shadows_) {
      if (where < s.key_lo || where >= s.key_hi) continue;
      if (s.request_fraction < 1 && std::uniform_real_distribution<double>(0, 1)(rng) >= s.request_fraction) continue;
      if (env.async != nullptr && env.async->send(*s.target, req)) {
        route_counters::add(counters().shadow_sent);
      } else {
        route_counters::add(counters().async_dropped);
      }
    }
  }
  return normal_.dispatch(slot, env);
}

}  // namespace ithaca::route
