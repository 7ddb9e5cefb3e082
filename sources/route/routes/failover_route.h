// The `failover` route (mcrouter's FailoverRoute) and the gutter, its
// `failover_exptime` form (FailoverWithExptimeRoute): the children in order
// until a reply that is not one of the errors that fail over
// (route_util.h: failover_errors; by default every error and no reply).
// mcrouter's failover_limit caps how much of the traffic may fail over, so a
// dead pool does not move its whole load onto a small failover pool: a
// bucket gains `rate` tokens with every request (up to `burst`), and a
// failover takes one (none after a server marked down: mcrouter's TKO);
// without one the error is the answer.
//
// The gutter (Facebook's memcache paper, section 3.3): writes that reach a
// failover child get their TTL capped (exptime, 10 s by default), so values
// in the gutter pool expire quickly and need no invalidation; deletes never
// fail over there.
//
// A multi-key text get goes to each child as a child slot of its own: the
// next child is asked only for the keys whose server failed in the one
// before (key_hit::failed), and the hits gathered so far stay, as mcrouter
// routes each key of a multiget on its own: one dead server costs a batch
// only its own keys, never the hits of the servers that answered.
//
// mcrouter's options (failover_policy.h for the order): with a policy other
// than in order, or with failover_tag, a multi-key get is split into one
// child slot per key, each routed through this route as a get of its own
// (each key has its own order, and its own tagged key).
//
// failover_tag: a request sent to a failover child whose key has a hash stop
// ("k|#|x") goes there as "k|#|x:failover=1" (when that fits in 250 bytes),
// as mcrouter tags it; the client's reply keeps its own key.
//
// enable_lease_pairing: a lease-get answered with a token by a failover
// child gets a token of the route's own (lease_pairs.h) in its place; the
// lease-set that brings it back goes to that child with the child's token.
// A lease-set with any other token goes to the first child, never onward.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "failover_policy.h"
#include "lease_pairs.h"
#include "route.h"
#include "route_util.h"

namespace ithaca::route {

class failover_route final : public route {
 public:
  struct options {
    // By protocol::op_class (get, set, delete, arithmetic, touch, other).
    std::array<failover_mask, 6> errors{kFailoverAll, kFailoverAll, kFailoverAll,
                                        kFailoverAll, kFailoverAll, kFailoverAll};
    double limit_rate = 0;  // tokens per request, (0, 1]; 0: unlimited
    double limit_burst = 1000;
    bool gutter = false;         // failover_exptime
    std::uint32_t exptime = 10;  // gutter: the TTL cap of failover writes
    failover_policy_config policy;
    bool failover_tag = false;
    bool lease_pairing = false;
  };
  failover_route(std::string name, std::vector<const route*> children, options opts);
  // False and *why when the options cannot be built.
  bool ok(std::string* why) const { return order_.ok(why); }
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  bool wants_resume(const request_slot& slot, const slot_frame& frame) const override;
  const char* kind() const override { return gutter_ ? "failover_exptime" : "failover"; }
  std::vector<const route*> children() const override { return children_; }
  bool tries_in_turn(const protocol::request&) const override { return true; }
  std::vector<const route*> targets_for(const protocol::request& req) const override;
  // mcrouter's "failover" or "failover:NAME"; the gutter is mcrouter's
  // FailoverRoute over the normal child and each failover child under a
  // ModifyExptimeRoute (min), as its FailoverWithExptimeRoute builds it.
  std::string handle_name() const override;
  void walk_handles(const protocol::request& req, handle_walk& w) const override;

 private:
  dispatch_status resume_multi(request_slot& slot, dispatch_env& env) const;
  dispatch_status resume_split(request_slot& slot) const;
  // Whether the request answered by the frame's child goes on to the next.
  bool goes_on(const request_slot& slot, const slot_frame& f, const protocol::routed_result& r) const;
  // A multi-key get split per key (policy or tag) rather than per child.
  bool splits(const protocol::request& req) const;
  void pair_lease(request_slot& slot, std::size_t child) const;
  // A failover token (failover_limit); false: none left (counted).
  bool take_token() const;
  // mcrouter's failover counters (stats/failover_counts.h) for the reply
  // `r` at the frame's position, once its fate is known: it `went_on` to the
  // next child, or did not (`limited`: for want of a token).
  void count_reply(const request_slot& slot, const slot_frame& f, const protocol::routed_result& r, bool went_on,
                   bool limited) const;
  std::vector<const route*> children_;
  std::array<failover_mask, 6> errors_;
  // failover_limit, in thousandths of a token (any worker; relaxed CAS).
  std::int64_t feed_ = 0;  // per request; 0: unlimited
  std::int64_t cap_ = 0;
  mutable std::atomic<std::int64_t> tokens_{0};
  bool gutter_;
  std::uint32_t exptime_;
  failover_order order_;
  bool tag_;
  bool pairing_;
  mutable lease_pairs pairs_;  // enable_lease_pairing
};

}  // namespace ithaca::route
