// The `l1l2` route: this ithaca's own store as an L1 in front of a route
// (L2), as a client-side near cache. A plain `get` (text or binary, one key
// or several) is answered from L1 for the keys it holds (counted in l1_hits);
// the others go to L2, and what L2 has is kept in L1 for `exptime` seconds
// (the cap: L2's TTL is not asked, so L1 may keep a value up to `exptime`
// past its L2 expiry). Every other request with keys (sets, deletes, touches,
// arithmetic, gets/gat/gats, meta commands) first removes its keys from L1,
// then goes to L2: L1 never serves a value this ithaca changed or deleted
// through L2, and a get that read L2 while such a write was under way keeps
// nothing in L1 (a write count per key stripe, compared before and after the
// fill). What other routers or clients change in L2 is seen once L1's copy
// expires (the cap bounds how stale L1 can be). flush_all goes to L2 only
// (L1's values expire).
//
// The store is reached through dispatch_env::local (flow::local_executor).
// A detached request (async_runner: shadow copies, all_async children) has
// none: there the route is L2 alone (its writes cannot invalidate L1).
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "command_class.h"
#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"

namespace ithaca::route {

namespace {

class l1l2_route final : public route {
 public:
  l1l2_route(std::string name, const route& l2, std::uint32_t exptime);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "l1l2"; }
  std::vector<const route*> children() const override { return {&l2_}; }
  void kind_counters(const counter_out& out) const override { out("l1_hits", hits_.load(std::memory_order_relaxed)); }

 private:
  static constexpr std::size_t kStripes = 1024;
  std::atomic<std::uint64_t>& stripe(std::string_view key) const;
  // The sum of the write counts of the stripes of c's keys.
  std::uint64_t writes_seen(const request_slot& slot, const request_slot& c) const;
  const route& l2_;
  std::uint32_t exptime_;  // L1's TTL cap (> 0)
  // Writes through this route by key stripe (any worker; seq_cst): a get
  // whose keys saw a write while it read L2 keeps nothing in L1.
  mutable std::array<std::atomic<std::uint64_t>, kStripes> writes_{};
  mutable std::atomic<std::uint64_t> hits_{0};  // l1_hits
};

}  // namespace

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
      hits_.fetch_add(1, std::memory_order_relaxed);
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

// ---- the kind: options, how the config formats spell them, build.

namespace {

struct l1l2_options final : config::route_options {
  std::uint32_t exptime = 0;
};

constexpr config::child_slot kL1L2Slots[] = {
    {"l2", "l2", nullptr, false, 1},
};
constexpr config::option_spec kL1L2Options[] = {
    config::seconds_option<&l1l2_options::exptime>("exptime", nullptr,
                                                   "the longest the local store keeps a value, e.g. 60s", true),
};
constexpr route_stat kL1L2Stats[] = {
    {"l1_hits", "l1l2: keys answered by the local store."},
};

void finish_l1l2(config::route_kind_reader& reader, config::route_config& r) {
  if (config::options_of<l1l2_options>(r).exptime == 0 && reader.has("exptime")) {
    reader.fail_at("exptime",
                   "exptime: an l1l2 route's cap must be above 0 (the local store is not invalidated by "
                   "other routers, so what it keeps must expire)");
  }
}

const route* build_l1l2(tree_builder& b, const config::route_config& r) {
  const route* l2 = b.child(r, "l2", true);
  if (l2 == nullptr) return nullptr;
  const std::uint32_t exptime = config::options_of<l1l2_options>(r).exptime;
  if (exptime == 0) return b.fail(r, "needs an `exptime` above 0 (the longest the local store keeps a value)");
  return b.add<l1l2_route>(b.name_of(r), *l2, exptime);
}

constexpr config::route_kind_info kL1L2Info{
    "l1l2",
    nullptr,
    "the local store as L1 in front of an L2 route",
    kL1L2Slots,
    kL1L2Options,
    [](config::route_format) -> std::shared_ptr<config::route_options> { return std::make_shared<l1l2_options>(); },
    config::route_kind_info::collapse::None,
    finish_l1l2,
};

}  // namespace

extern constinit const kind_module kL1L2Kind{kL1L2Info, build_l1l2, kL1L2Stats};

}  // namespace ithaca::route
