// The `l1l2_cache` route (mcrouter's L1L2CacheRoute): an L1 route in front
// of an L2 route, both of them routes (pools), unlike `l1l2`, whose L1 is
// this ithaca's own store. What mcrouter does (lib/routes/L1L2CacheRoute.h):
//
// - a get (get, gets, gat, gats; text or binary) asks L1; a hit is the
//   answer. Otherwise L2 is asked and its reply is the answer; an L2 hit is
//   then added to L1 (`add`, exptime upgrading_l1_exptime), in the
//   background (async_runner).
// - negative caching, with ncache_update_period > 0: an L2 miss adds the
//   marker "ncache" (flags 0x10000, mcrouter's MC_MSG_FLAG_NEGATIVE_CACHE)
//   to L1 for ncache_exptime seconds; an L1 hit on a marker answers a miss
//   without asking L2. Every ncache_update_period-th marker hit (one count
//   per route) also refreshes it: L2 is asked, and L1 `set` to L2's value
//   or to a new marker. mcrouter refreshes in the background; here that one
//   request waits for L2 (its answer is a miss all the same).
// - everything else (sets, deletes, arithmetic, touch, meta commands,
//   lease-get/lease-set, flush_all) goes to L1 alone, as in mcrouter.
//
// A multi-key get is split into one child slot per key, each a get of its
// own through this route (mcrouter routes every key of a multiget alone).
#include <atomic>
#include <cstdint>
#include <ctime>

#include "async_runner.h"
#include "command_class.h"
#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"

namespace ithaca::route {

namespace {

constexpr std::uint32_t kNcacheFlag = 0x10000;
constexpr std::string_view kNcacheValue = "ncache";
constexpr std::int64_t kL1L2CacheRelativeMax = 60 * 60 * 24 * 30;

// frame.state
enum class l1l2_cache_step : std::uint32_t {
  L1 = 0,       // the slot went to L1
  L2 = 1,       // the slot went to L2 (its reply is the answer)
  Refresh = 2,  // a marker hit: child slot 0 went to L2 to refresh L1; the answer is a miss
  Split = 3,    // a multi-key get: one child slot per key
};

bool l1l2_cache_get_like(const protocol::request& req) {
  if (req.proto == protocol::protocol_kind::Meta || req.cmd == protocol::command::LeaseGet) return false;
  return protocol::operation_of(req) == kinds::op_class::Get || req.cmd == protocol::command::Gat ||
         req.cmd == protocol::command::Gats;
}

bool l1l2_cache_hit(const protocol::routed_result& r) {
  return r.outcome == protocol::routed_outcome::Hits && r.key_count() == 1 && r.hit(0).found;
}

class l1l2_cache_route final : public route {
 public:
  struct options {
    std::uint32_t upgrading_exptime = 0;
    std::uint32_t ncache_exptime = 0;
    std::uint32_t ncache_period = 0;  // 0: no negative caching
  };
  l1l2_cache_route(std::string name, const route& l1, const route& l2, options o)
      : route(std::move(name)), l1_(l1), l2_(l2), o_(o), counter_(o.ncache_period) {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  bool wants_resume(const request_slot& slot, const slot_frame& f) const override;
  const char* kind() const override { return "l1l2_cache"; }
  std::vector<const route*> children() const override { return {&l1_, &l2_}; }
  bool tries_in_turn(const protocol::request& req) const override { return l1l2_cache_get_like(req); }
  std::vector<const route*> targets_for(const protocol::request& req) const override {
    if (l1l2_cache_get_like(req)) return {&l1_, &l2_};
    return {&l1_};
  }
  void kind_counters(const counter_out& out) const override {
    out("l1_fills", fills_.load(std::memory_order_relaxed));
    out("ncache_hits", ncache_hits_.load(std::memory_order_relaxed));
  }

 private:
  // A marker hit: whether this one refreshes (mcrouter's counter).
  bool refresh_due() const;
  // A background write to L1 (add, or set for a refresh).
  void write_l1(const protocol::request& like, protocol::command cmd, std::string_view value, std::uint32_t flags,
                std::uint32_t exptime, dispatch_env& env) const;
  // After L2's reply `r` for `req`: L1 gets the value, or a marker.
  void fill_l1(const protocol::request& req, const protocol::routed_result& r, protocol::command cmd,
               dispatch_env& env) const;
  const route& l1_;
  const route& l2_;
  options o_;
  mutable std::atomic<std::uint32_t> counter_;  // marker hits until a refresh (any worker)
  mutable std::atomic<std::uint64_t> fills_{0};
  mutable std::atomic<std::uint64_t> ncache_hits_{0};
};

bool l1l2_cache_route::refresh_due() const {
  if (o_.ncache_period == 0) return false;
  std::uint32_t c = counter_.load(std::memory_order_relaxed);
  while (true) {
    const std::uint32_t next = c <= 1 ? o_.ncache_period : c - 1;
    if (counter_.compare_exchange_weak(c, next, std::memory_order_relaxed)) return c <= 1;
  }
}

void l1l2_cache_route::write_l1(const protocol::request& like, protocol::command cmd, std::string_view value,
                                std::uint32_t flags, std::uint32_t exptime, dispatch_env& env) const {
  if (env.async == nullptr) return;  // a detached request: no background writes of its own
  protocol::request w;
  w.cmd = cmd;
  w.proto = protocol::protocol_kind::Ascii;
  w.keys.push_back(like.key());
  w.value = value;
  w.flags = flags;
  // memcached reads an exptime past 30 days as a unix time.
  w.exptime = exptime > kL1L2CacheRelativeMax ? static_cast<std::int64_t>(std::time(nullptr)) + exptime : exptime;
  if (env.async->send(l1_, w)) {
    fills_.fetch_add(1, std::memory_order_relaxed);
  } else {
    route_counters::add(counters().async_dropped);
  }
}

void l1l2_cache_route::fill_l1(const protocol::request& req, const protocol::routed_result& r, protocol::command cmd,
                               dispatch_env& env) const {
  if (l1l2_cache_hit(r)) {
    const protocol::routed_result::key_hit& h = r.hit(0);
    write_l1(req, cmd, r.data(h), h.flags, o_.upgrading_exptime, env);
  } else if (o_.ncache_period != 0 && r.outcome == protocol::routed_outcome::Hits && r.failed_keys == 0) {
    write_l1(req, cmd, kNcacheValue, kNcacheFlag, o_.ncache_exptime, env);
  }
}

dispatch_status l1l2_cache_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  if (!l1l2_cache_get_like(slot.req)) return l1_.dispatch(slot, env);
  if (slot.req.keys.size() > 1) {
    slot.push_frame(slot_frame{this, static_cast<std::uint32_t>(l1l2_cache_step::Split), 0, 0});
    dispatch_each_key(*this, slot, env);
    return dispatch_status::Pending;
  }
  slot.push_frame(slot_frame{this, static_cast<std::uint32_t>(l1l2_cache_step::L1), 0, 0});
  dispatch_child(l1_, slot, env);
  return dispatch_status::Pending;
}

// An L1 hit that is not a marker is the answer where it arrives.
bool l1l2_cache_route::wants_resume(const request_slot& slot, const slot_frame& f) const {
  if (f.state != static_cast<std::uint32_t>(l1l2_cache_step::L1)) return true;
  return !l1l2_cache_hit(slot.result) || (slot.result.hit(0).flags & kNcacheFlag) != 0;
}

dispatch_status l1l2_cache_route::resume(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  switch (static_cast<l1l2_cache_step>(f.state)) {
    case l1l2_cache_step::Split:
      for (std::size_t i = 0; i < slot.children_in_use(); ++i) {
        request_slot& c = slot.child_at(i);
        merge_hits(slot.result, c.result, c.key_map);
      }
      return dispatch_status::Done;
    case l1l2_cache_step::L1: {
      if (!wants_resume(slot, f)) return dispatch_status::Done;
      if (l1l2_cache_hit(slot.result)) {
        // A marker: a miss, without asking L2 (unless it is time to refresh).
        ncache_hits_.fetch_add(1, std::memory_order_relaxed);
        const bool refresh = refresh_due();
        slot.result.prepare(slot.req);
        slot.result.outcome = protocol::routed_outcome::Hits;
        if (!refresh) return dispatch_status::Done;
        f.state = static_cast<std::uint32_t>(l1l2_cache_step::Refresh);
        request_slot& c = slot.child(0);
        slot.add_call();
        dispatch_child(l2_, c, env);
        return dispatch_status::Pending;
      }
      f.state = static_cast<std::uint32_t>(l1l2_cache_step::L2);
      slot.release_reply();  // L2 prepares the result again
      dispatch_child(l2_, slot, env);
      return dispatch_status::Pending;
    }
    case l1l2_cache_step::L2: fill_l1(slot.req, slot.result, protocol::command::Add, env); return dispatch_status::Done;
    case l1l2_cache_step::Refresh:
      fill_l1(slot.req, slot.child_at(0).result, protocol::command::Set, env);
      return dispatch_status::Done;
  }
  return dispatch_status::Done;
}

// ---- the kind: options, how the config formats spell them, build.

struct l1l2_cache_options final : config::route_options {
  std::uint32_t upgrading_exptime = 0;
  std::uint32_t ncache_exptime = 0;
  std::uint32_t ncache_period = 0;
};

// ncache_update_period: a count of marker hits, a whole number.
void read_ncache_period(config::route_kind_reader& in, const char* key, config::route_config&,
                        config::route_options& opts) {
  const YAML::Node& v = *in.value(key);
  long long n = -1;
  try {
    n = v.IsScalar() ? v.as<long long>() : -1;
  } catch (const YAML::Exception&) {
    n = -1;
  }
  if (n < 0 || n > 1000000000) {
    in.fail_node(v, in.format() == config::route_format::Yaml
                        ? std::string("ncache_update_period: expected a whole number of marker hits (0: never)")
                        : std::string("L1L2CacheRoute: ncacheUpdatePeriod is not an integer"));
    return;
  }
  static_cast<l1l2_cache_options&>(opts).ncache_period = static_cast<std::uint32_t>(n);
}

std::string show_ncache_period(const config::route_options& opts) {
  return std::to_string(static_cast<const l1l2_cache_options&>(opts).ncache_period);
}

constexpr config::child_slot kL1L2CacheSlots[] = {
    {"l1", "l1", "l1", false, 1, "L1L2CacheRoute: no l1 route"},
    {"l2", "l2", "l2", false, 1, "L1L2CacheRoute: no l2 route"},
};
constexpr config::option_spec kL1L2CacheOptions[] = {
    config::seconds_option<&l1l2_cache_options::upgrading_exptime>(
        "upgrading_l1_exptime", "upgradingL1Exptime", "the TTL of a value an L2 hit adds to L1 (0: none)", true),
    config::seconds_option<&l1l2_cache_options::ncache_exptime>(
        "ncache_exptime", "ncacheExptime", "the TTL of the \"ncache\" marker an L2 miss adds to L1"),
    config::custom_option("ncache_update_period", "ncacheUpdatePeriod",
                          "negative caching: every Nth marker hit refreshes it from L2 (0: no negative caching)",
                          read_ncache_period, show_ncache_period, "5", "5"),
};
constexpr route_stat kL1L2CacheStats[] = {
    {"l1_fills", "l1l2_cache: values and markers written to L1 in the background."},
    {"ncache_hits", "l1l2_cache: gets answered a miss by an L1 negative-cache marker."},
};

const route* build_l1l2_cache(tree_builder& b, const config::route_config& r) {
  const route* l1 = b.child(r, "l1", true);
  const route* l2 = l1 != nullptr ? b.child(r, "l2", true) : nullptr;
  if (l2 == nullptr) return nullptr;
  const auto& o = config::options_of<l1l2_cache_options>(r);
  return b.add<l1l2_cache_route>(b.name_of(r), *l1, *l2,
                                 l1l2_cache_route::options{o.upgrading_exptime, o.ncache_exptime, o.ncache_period});
}

constexpr config::route_kind_info kL1L2CacheInfo{
    "l1l2_cache",
    "L1L2CacheRoute",
    "an L1 route in front of an L2 route: gets fill L1 from L2, with negative caching",
    kL1L2CacheSlots,
    kL1L2CacheOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> {
      return std::make_shared<l1l2_cache_options>();
    },
    config::route_kind_info::collapse::None,
    nullptr,
};

}  // namespace

extern constinit const kind_module kL1L2CacheKind{kL1L2CacheInfo, build_l1l2_cache, kL1L2CacheStats};

}  // namespace ithaca::route
