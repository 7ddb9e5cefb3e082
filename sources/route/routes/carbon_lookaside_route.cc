// The `carbon_lookaside` route (mcrouter's CarbonLookasideRoute): a
// lookaside cache in front of a child. A get (text get, one key; a
// multi-key get is split into one get per key through this route) first
// reads `prefix` + key from the `lookaside` route (in mcrouter a memcache
// client router made from its "flavor" file: the mcrouter reader builds that
// route from the flavor's client config, mcrouter_routes.cc); a hit is the
// answer. Otherwise the child is asked and a hit it answers is written to
// the lookaside in the background (async_runner), with `ttl` seconds (0: no
// expiry).
//
// ttl_unit_ms: `ttl` is in milliseconds (10 to 999, dividing 1000). The
// item lives 1 s on the server, and its key ends in ":N", N the current
// millisecond of the second divided by ttl, so a key is read again only
// within its ttl-long window, as mcrouter does it. key_split_size N > 1
// adds ":ksH" (H: the host id modulo N) before that: N routers spread one
// hot key over N lookaside keys.
//
// Leases (lease_settings.enable_leases): the lookaside read is a lease-get;
// a hot miss (token 1: someone else fills it) waits initial_wait_interval_ms,
// doubling up to max_wait_interval_ms, and asks again, num_retries times at
// most (then the child is asked, and its hit filled with a plain set, as
// mcrouter fills without a token); a miss with a token is filled with
// lease-set and that token. The backend codec speaks leases as meta
// (memcached's mg N / ms C), also to an ascii pool's servers.
//
// What differs from mcrouter: mcrouter's helper (the open-source
// MemcacheCarbonLookasideHelper) caches the reply of every request with a
// key, Carbon-serialized; ithaca caches the hits of gets, stored as memcached
// items (the value and flags), and sends every other request (sets,
// deletes, gets whose CAS or TTL belongs to the child's server) to the child
// alone: a lookaside answering "STORED" for a set would hide the child's
// answer. Values stored by mcrouter are not readable here, nor the reverse.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <string>
#include <utility>

#include "async_runner.h"
#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"
#include "units.h"
#include "yaml_section.h"

namespace ithaca::route {

namespace {

constexpr std::int64_t kLookasideRelativeMax = 60 * 60 * 24 * 30;
constexpr std::size_t kLookasideKeyMax = 250;

struct lookaside_leases {
  bool enabled = false;
  std::uint32_t initial_wait_ms = 2;
  std::uint32_t max_wait_ms = 500;
  std::uint32_t retries = 10;
};

struct lookaside_options final : config::route_options {
  std::uint32_t ttl = 0;
  bool ttl_ms = false;  // ttl_unit_ms
  std::string prefix;
  std::string flavor;  // mcrouter's; the reader made the lookaside route from it
  std::uint32_t key_split = 1;
  lookaside_leases leases;
};

// frame.state: the step whose call is out.
enum class lookaside_step : std::uint32_t {
  Read = 0,   // child slot 0: the lookaside read (get or lease-get)
  Wait = 1,   // a hot miss: waiting before the read is sent again
  Child = 2,  // the slot went to the child (its reply is the answer)
  Split = 3,  // a multi-key get: one child slot per key
};

bool lookaside_candidate(const protocol::request& req) {
  return req.cmd == protocol::command::Get && req.proto != protocol::protocol_kind::Meta && !req.keys.empty();
}

bool lookaside_hit(const protocol::routed_result& r) {
  return r.outcome == protocol::routed_outcome::Hits && r.key_count() == 1 && r.hit(0).found;
}

bool lookaside_key_ok(std::string_view k) {
  if (k.empty() || k.size() > kLookasideKeyMax) return false;
  return std::all_of(k.begin(), k.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > 32 && u != 127;
  });
}

class carbon_lookaside_route final : public route {
 public:
  carbon_lookaside_route(std::string name, const route& child, const route& lookaside, const lookaside_options& o)
      : route(std::move(name)),
        child_(child),
        lookaside_(lookaside),
        ttl_(o.ttl),
        ttl_ms_(o.ttl_ms),
        prefix_(o.prefix),
        split_suffix_(o.key_split > 1 ? ":ks" + std::to_string(host_id_of("") % o.key_split) : std::string()),
        leases_(o.leases) {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "carbon_lookaside"; }
  std::vector<const route*> children() const override { return {&child_, &lookaside_}; }
  std::vector<const route*> targets_for(const protocol::request& req) const override {
    if (lookaside_candidate(req)) return {&lookaside_, &child_};
    return {&child_};
  }
  bool tries_in_turn(const protocol::request& req) const override { return lookaside_candidate(req); }
  // mcrouter's routeName(), its helper named as ithaca's.
  std::string handle_name() const override {
    return "lookaside-cache|name=ithaca|ttl=" + std::to_string(ttl_) + (ttl_ms_ ? "ms" : "s") +
           "|leases=" + (leases_.enabled ? "true" : "false");
  }
  void kind_counters(const counter_out& out) const override {
    out("lookaside_hits", hits_.load(std::memory_order_relaxed));
    out("lookaside_fills", fills_.load(std::memory_order_relaxed));
    out("lookaside_hot_misses", hot_misses_.load(std::memory_order_relaxed));
  }

 private:
  // The lookaside key of `key`: prefix, key, split suffix, ms window.
  std::string lookaside_key(std::string_view key) const;
  // Sends child slot 0 (its key set already) to the lookaside as `cmd`.
  void send_read(request_slot& slot, dispatch_env& env, protocol::command cmd, lookaside_step step) const;
  dispatch_status after_read(request_slot& slot, dispatch_env& env) const;
  dispatch_status to_child(request_slot& slot, dispatch_env& env) const;
  // After the child's hit: the lookaside gets it (lease-set with `token`, or set).
  void fill(request_slot& slot, std::uint64_t token, dispatch_env& env) const;
  const route& child_;
  const route& lookaside_;
  std::uint32_t ttl_;
  bool ttl_ms_;
  std::string prefix_;
  std::string split_suffix_;
  lookaside_leases leases_;
  // Relaxed counters, any worker.
  mutable std::atomic<std::uint64_t> hits_{0}, fills_{0}, hot_misses_{0};
};

std::string carbon_lookaside_route::lookaside_key(std::string_view key) const {
  std::string k = prefix_;
  k.append(key).append(split_suffix_);
  if (ttl_ms_) {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now).count() % 1000;
    k += ':';
    k += std::to_string(ms / ttl_);
  }
  return k;
}

void carbon_lookaside_route::send_read(request_slot& slot, dispatch_env& env, protocol::command cmd,
                                       lookaside_step step) const {
  slot.top_frame().state = static_cast<std::uint32_t>(step);
  request_slot& c = slot.child_at(0);
  c.req.cmd = cmd;
  c.result.prepare(c.req);
  c.result.outcome = protocol::routed_outcome::Pending;
  slot.add_call();
  dispatch_child(lookaside_, c, env);
}

dispatch_status carbon_lookaside_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  if (!lookaside_candidate(slot.req)) return child_.dispatch(slot, env);
  if (slot.req.keys.size() > 1) {
    slot.push_frame(slot_frame{this, static_cast<std::uint32_t>(lookaside_step::Split), 0, 0});
    dispatch_each_key(*this, slot, env);
    return dispatch_status::Pending;
  }
  const std::string key = lookaside_key(slot.req.key());
  request_slot& c = slot.child(0);
  if (!lookaside_key_ok(key) || key.size() > c.req.scratch.size()) return child_.dispatch(slot, env);
  // The lookaside key lives in the child's scratch, read again by fill().
  std::copy(key.begin(), key.end(), c.req.scratch.begin());
  c.req.keys.clear();
  c.req.keys.push_back(std::string_view(c.req.scratch.data(), key.size()));
  // frame.count: reads sent so far; saved: the delay before the next one.
  slot.push_frame(slot_frame{this, 0, 0, static_cast<std::int64_t>(leases_.initial_wait_ms)});
  send_read(slot, env, leases_.enabled ? protocol::command::LeaseGet : protocol::command::Get, lookaside_step::Read);
  return dispatch_status::Pending;
}

dispatch_status carbon_lookaside_route::to_child(request_slot& slot, dispatch_env& env) const {
  slot.top_frame().state = static_cast<std::uint32_t>(lookaside_step::Child);
  slot.release_reply();  // the child prepares the result again
  dispatch_child(child_, slot, env);
  return dispatch_status::Pending;
}

dispatch_status carbon_lookaside_route::after_read(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  const request_slot& c = slot.child_at(0);
  const protocol::routed_result& r = c.result;
  ++f.count;
  if (lookaside_hit(r)) {
    hits_.fetch_add(1, std::memory_order_relaxed);
    const protocol::routed_result::key_hit& h = r.hit(0);
    // Rendered anew with the client's key (the lookaside's VALUE line names its own).
    slot.result.prepare(slot.req);
    slot.result.outcome = protocol::routed_outcome::Hits;
    slot.result.set_hit(0, h.flags, 0, r.data(h));
    return dispatch_status::Done;
  }
  if (r.outcome == protocol::routed_outcome::LeaseToken && r.number == 1) {
    // A hot miss: another client holds the lease; wait and read again.
    hot_misses_.fetch_add(1, std::memory_order_relaxed);
    if (f.count <= leases_.retries && env.async != nullptr) {
      const auto wait = static_cast<mm::millis>(f.saved);
      f.saved = std::min<std::int64_t>(f.saved * 2, leases_.max_wait_ms);
      f.state = static_cast<std::uint32_t>(lookaside_step::Wait);
      if (env.async->delay(slot, wait)) return dispatch_status::Pending;
    }
  }
  // frame.saved now holds the lease token to fill with (0: a plain set).
  f.saved = r.outcome == protocol::routed_outcome::LeaseToken && r.number > 1 ? static_cast<std::int64_t>(r.number) : 0;
  return to_child(slot, env);
}

dispatch_status carbon_lookaside_route::resume(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  switch (static_cast<lookaside_step>(f.state)) {
    case lookaside_step::Split:
      for (std::size_t i = 0; i < slot.children_in_use(); ++i) {
        request_slot& c = slot.child_at(i);
        merge_hits(slot.result, c.result, c.key_map);
      }
      return dispatch_status::Done;
    case lookaside_step::Read: return after_read(slot, env);
    case lookaside_step::Wait:
      send_read(slot, env, protocol::command::LeaseGet, lookaside_step::Read);
      return dispatch_status::Pending;
    case lookaside_step::Child:
      if (lookaside_hit(slot.result)) fill(slot, static_cast<std::uint64_t>(f.saved), env);
      return dispatch_status::Done;
  }
  return dispatch_status::Done;
}

void carbon_lookaside_route::fill(request_slot& slot, std::uint64_t token, dispatch_env& env) const {
  if (env.async == nullptr) return;  // a detached request: no background writes of its own
  const protocol::routed_result::key_hit& h = slot.result.hit(0);
  protocol::request w;
  w.cmd = token != 0 ? protocol::command::LeaseSet : protocol::command::Set;
  w.proto = protocol::protocol_kind::Ascii;
  w.keys.push_back(slot.child_at(0).req.key());
  w.value = slot.result.data(h);
  w.flags = h.flags;
  w.lease_token = token;
  // ms ttl: the item lives a second; its window is in its key.
  const std::int64_t ttl = ttl_ms_ ? 1 : ttl_;
  // memcached reads an exptime past 30 days as a unix time.
  w.exptime = ttl > kLookasideRelativeMax ? static_cast<std::int64_t>(std::time(nullptr)) + ttl : ttl;
  // send() copies the key and value before it returns.
  if (env.async->send(lookaside_, w)) {
    fills_.fetch_add(1, std::memory_order_relaxed);
  } else {
    route_counters::add(counters().async_dropped);
  }
}

// ---- the kind: options, how the config formats spell them, build.

// An integer option of mcrouter's ("ttl", "key_split_size"), at most `max`.
bool lookaside_read_count(config::route_kind_reader& in, const YAML::Node& v, const std::string& what,
                          std::uint64_t min, std::uint64_t max, std::uint32_t& out) {
  std::uint64_t n = 0;
  if (!v.IsScalar() || !config::parse_unsigned(v.Scalar(), n) || n < min || n > max) {
    in.fail_node(v, "CarbonLookasideRoute: '" + what + "' must be an integer from " + std::to_string(min) + " to " +
                        std::to_string(max));
    return false;
  }
  out = static_cast<std::uint32_t>(n);
  return true;
}

void lookaside_read_ttl(config::route_kind_reader& in, const char* key, config::route_config&,
                        config::route_options& opts) {
  lookaside_read_count(in, *in.value(key), key, 0, 10u * 365 * 24 * 3600, static_cast<lookaside_options&>(opts).ttl);
}

std::string lookaside_show_ttl(const config::route_options& opts) {
  const auto& o = static_cast<const lookaside_options&>(opts);
  return std::to_string(o.ttl) + (o.ttl_ms ? "ms" : "s");
}

void lookaside_read_split(config::route_kind_reader& in, const char* key, config::route_config&,
                          config::route_options& opts) {
  lookaside_read_count(in, *in.value(key), key, 1, 1u << 20, static_cast<lookaside_options&>(opts).key_split);
}

std::string lookaside_show_split(const config::route_options& opts) {
  const auto k = static_cast<const lookaside_options&>(opts).key_split;
  return k > 1 ? std::to_string(k) : std::string();
}

// lease_settings: {enable_leases, initial_wait_interval_ms,
// max_wait_interval_ms, num_retries} (mcrouter's names in both formats).
void lookaside_read_leases(config::route_kind_reader& in, const char* key, config::route_config&,
                           config::route_options& opts) {
  auto& l = static_cast<lookaside_options&>(opts).leases;
  const YAML::Node& v = *in.value(key);
  if (!v.IsMap()) {
    in.fail_node(v, "CarbonLookasideRoute: 'lease_settings' is not an object");
    return;
  }
  in.check_keys(v, "lease_settings",
                {"enable_leases", "initial_wait_interval_ms", "max_wait_interval_ms", "num_retries"});
  if (const YAML::Node e = v["enable_leases"]) {
    const std::string t = e.IsScalar() ? e.Scalar() : "";
    if (t != "true" && t != "false") {
      in.fail_node(e, "CarbonLookasideRoute: 'enable_leases' is not bool");
      return;
    }
    l.enabled = t == "true";
  }
  struct field {
    const char* name;
    std::uint32_t* out;
  };
  for (const field f : {field{"initial_wait_interval_ms", &l.initial_wait_ms},
                        field{"max_wait_interval_ms", &l.max_wait_ms}, field{"num_retries", &l.retries}}) {
    if (const YAML::Node n = v[f.name]) {
      if (!lookaside_read_count(in, n, f.name, 0, f.out == &l.retries ? 1000 : 60'000, *f.out)) return;
    }
  }
}

std::string lookaside_show_leases(const config::route_options& opts) {
  const auto& l = static_cast<const lookaside_options&>(opts).leases;
  if (!l.enabled) return std::string();
  return "on:" + std::to_string(l.initial_wait_ms) + "ms-" + std::to_string(l.max_wait_ms) + "ms*" +
         std::to_string(l.retries);
}

// mcrouter's flavor_overrides and helper_config: an object each, no effect
// here (ithaca's lookaside client is the route the flavor names; the helper
// is ithaca's own).
void lookaside_read_object(config::route_kind_reader& in, const char* key, config::route_config&,
                           config::route_options&) {
  if (!in.value(key)->IsMap())
    in.fail_node(*in.value(key), "CarbonLookasideRoute: '" + std::string(key) + "' is not an object");
}

constexpr config::child_slot kLookasideSlots[] = {
    {"child", "child", "child", false, 1, "CarbonLookasideRoute: 'child' property is missing"},
    // mcrouter: made from `flavor` by the reader, never written.
    {"lookaside", "lookaside", nullptr, false, 1},
};
constexpr config::option_spec kLookasideOptions[] = {
    config::custom_option("ttl", "ttl",
                          "the TTL of a value stored in the lookaside (seconds; ms with ttl_unit_ms; 0: none)",
                          lookaside_read_ttl, lookaside_show_ttl, "60", "60", true),
    config::flag_option<&lookaside_options::ttl_ms>("ttl_unit_ms", "ttl_unit_ms",
                                                    "ttl is in milliseconds (10 to 999, dividing 1000)"),
    config::text_option<&lookaside_options::prefix>("prefix", "prefix", "put before each key in the lookaside", false,
                                                    "la-"),
    config::text_option<&lookaside_options::flavor>(
        nullptr, "flavor", "mcrouter's flavor file (file:PATH): its options.config is the lookaside's client config",
        false, "\"file:/etc/mcrouter/lookaside.json\""),
    config::custom_option("key_split_size", "key_split_size",
                          "N > 1: each key is one of N lookaside keys (by host id), spreading a hot key",
                          lookaside_read_split, lookaside_show_split, "3", "3"),
    config::custom_option("lease_settings", "lease_settings",
                          "leases for the lookaside read and fill: {enable_leases, initial_wait_interval_ms, "
                          "max_wait_interval_ms, num_retries}",
                          lookaside_read_leases, lookaside_show_leases, "{enable_leases: true}",
                          "{\"enable_leases\": true}"),
    config::custom_option(nullptr, "flavor_overrides", "mcrouter's options over the flavor's (accepted; no effect)",
                          lookaside_read_object, config::show_nothing, nullptr, "{}"),
    config::custom_option(nullptr, "helper_config", "mcrouter's helper's options (accepted; no effect)",
                          lookaside_read_object, config::show_nothing, nullptr, "{}"),
};
constexpr route_stat kLookasideStats[] = {
    {"lookaside_hits", "carbon_lookaside: gets answered from the lookaside."},
    {"lookaside_fills", "carbon_lookaside: child hits written to the lookaside in the background."},
    {"lookaside_hot_misses", "carbon_lookaside: lease-get hot misses (another client fills the key)."},
};

// mcrouter's check of a sub-second ttl.
void finish_lookaside(config::route_kind_reader& reader, config::route_config& r) {
  const auto& o = config::options_of<lookaside_options>(r);
  if (o.ttl_ms && (o.ttl < 10 || o.ttl >= 1000 || 1000 % o.ttl != 0)) {
    reader.fail(
        "CarbonLookasideRoute: for sub-second ttl, you must use a number that is >= 10, < 1000, and 1000 must be a "
        "multiple of ttl.");
  }
}

const route* build_lookaside(tree_builder& b, const config::route_config& r) {
  const route* child = b.child(r, "child", true);
  const route* lookaside = child != nullptr ? b.child(r, "lookaside", true) : nullptr;
  if (lookaside == nullptr) return nullptr;
  return b.add<carbon_lookaside_route>(b.name_of(r), *child, *lookaside, config::options_of<lookaside_options>(r));
}

constexpr config::route_kind_info kLookasideInfo{
    "carbon_lookaside",
    "CarbonLookasideRoute",
    "a lookaside cache route in front of a child: gets read it first and fill it from the child",
    kLookasideSlots,
    kLookasideOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> {
      return std::make_shared<lookaside_options>();
    },
    config::route_kind_info::collapse::None,
    finish_lookaside,
};

}  // namespace

extern constinit const kind_module kCarbonLookasideKind{kLookasideInfo, build_lookaside, kLookasideStats};

}  // namespace ithaca::route
