// The `warm_up` route (mcrouter's WarmUpRoute): a new (cold) pool is filled
// from an old (warm) one as clients read it, so adding servers does not
// raise the miss rate. A `get` (text or binary, one key or several) goes to
// the cold child; the keys it misses are read from the warm child, the
// client gets what warm has, and each value found is added to the cold child
// by a detached `add` (async_runner: the client does not wait for it; an
// add, so a value set on cold meanwhile is not overwritten), counted in
// warm_fills (async_dropped when the worker's bound refuses it).
//
// The fill's TTL: `exptime` when it is not 0; with 0, what the warm item has
// left, asked with `mg KEY t v f` (one per missing key) where the warm child
// speaks meta. A warm child that speaks only ascii cannot say (the mg is
// refused by its codec): its keys are then read with a plain get and filled
// with no expiry (mcrouter's fill without metaget), the documented fallback.
// An item whose TTL runs out as it is read is answered but not filled.
//
// A meta client's `mg` that only reads (no T, N, R, E or q) is read from
// warm the same way on a miss or an error on cold: warm is sent the client's
// mg (its reply is the client's, as warm gives it) and `mg KEY t v f` for
// the fill (with an ascii warm backend, the client's own reply holds the
// value when it asked for it: v).
//
// mcrouter's metaget: cold's answer, or warm's when cold misses (no fill).
//
// Everything else (sets, deletes, arithmetic, touches, gets/gats/gat whose
// CAS or TTL belongs to the cold server, other meta commands, lease-get)
// goes to the cold child only: the client keeps the warm pool consistent.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <ctime>
#include <utility>

#include "async_runner.h"
#include "backend_encode.h"
#include "number.h"
#include "route_kind.h"
#include "route_util.h"

namespace ithaca::route {

namespace {

class warm_up_route final : public route {
 public:
  warm_up_route(std::string name, const route& cold, const route& warm, std::uint32_t exptime);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "warm_up"; }
  std::vector<const route*> children() const override { return {&cold_, &warm_}; }
  void kind_counters(const counter_out& out) const override {
    out("warm_fills", fills_.load(std::memory_order_relaxed));
  }

 private:
  dispatch_status after_cold(request_slot& slot, dispatch_env& env) const;
  dispatch_status after_meta(request_slot& slot, dispatch_env& env) const;
  dispatch_status after_get(request_slot& slot, dispatch_env& env) const;
  dispatch_status after_cold_mg(request_slot& slot, dispatch_env& env) const;
  dispatch_status after_warm_mg(request_slot& slot, dispatch_env& env) const;
  void send_get(request_slot& slot, dispatch_env& env, const std::vector<std::uint32_t>& keys) const;
  // An `add` of key `i`'s value (in slot.result) to the cold child.
  void fill(request_slot& slot, dispatch_env& env, std::size_t i, std::int64_t ttl) const;
  void send_add(std::string_view key, std::string_view value, std::uint32_t flags, std::int64_t ttl,
                dispatch_env& env) const;
  const route& cold_;
  const route& warm_;
  std::uint32_t exptime_;                        // 0: the TTL the warm item has left
  mutable std::atomic<std::uint64_t> fills_{0};  // warm_fills
};

// frame.state: the phase whose calls are out.
enum phase : std::uint32_t {
  kCold = 0,         // child 0: the client's get on the cold child
  kMeta = 1,         // children 1..count: `mg KEY t v f` on warm, one per key missed
  kGet = 2,          // child `saved`: a get of the keys still to read on warm
  kMetaClient = 3,   // a meta client's mg: child 1 its own mg on warm, child 2 `mg KEY t v f`
  kMetagetCold = 4,  // mcrouter's metaget: child 0 on cold
  kMetagetWarm = 5,  // and on a miss there, child 1 on warm
};

// A meta client's mg that only reads (no touch, vivify, recache or quiet
// mode): it is read from warm on a miss, as a get is.
bool plain_mg(const protocol::request& r) {
  if (r.proto != protocol::protocol_kind::Meta || r.cmd != protocol::command::MetaGet) return false;
  for (const char f : {'T', 'N', 'R', 'E', 'q'}) {
    if (r.meta.has(f)) return false;
  }
  return true;
}

constexpr std::int64_t kWarmUpRelativeMax = 60 * 60 * 24 * 30;

// A meta `mg KEY t v f` for `key` (the parent's key view, valid while the
// parent is), base64 with 'b' when the key cannot travel as text.
void make_meta_get(protocol::request& m, std::string_view key) {
  m.clear();
  m.cmd = protocol::command::MetaGet;
  m.proto = protocol::protocol_kind::Meta;
  m.meta.clear();
  for (const char f : {'t', 'v', 'f'}) {
    m.meta.set(f);
    m.meta.order[m.meta.order_size++] = f;
  }
  if (protocol::text_safe_key(key) || key.size() > m.scratch.size()) {
    m.keys.push_back(key);
    return;
  }
  std::memcpy(m.scratch.data(), key.data(), key.size());
  m.keys.push_back(std::string_view(m.scratch.data(), key.size()));
  m.meta_key_binary = true;
  m.meta.set('b');
  m.meta.order[m.meta.order_size++] = 'b';
}

// The keys of `result` that are not hits.
std::vector<std::uint32_t> misses_of(const protocol::routed_result& result) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < result.key_count(); ++i) {
    if (!result.hit(i).found) out.push_back(static_cast<std::uint32_t>(i));
  }
  return out;
}

}  // namespace

warm_up_route::warm_up_route(std::string name, const route& cold, const route& warm, std::uint32_t exptime)
    : route(std::move(name)), cold_(cold), warm_(warm), exptime_(exptime) {}

dispatch_status warm_up_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  if (slot.req.cmd == protocol::command::McMetaget) {
    // mcrouter's WarmUpRoute: cold's answer, warm's on a miss there (no fill).
    slot.push_frame(slot_frame{this, kMetagetCold, 0, 0});
    slot.add_call();
    dispatch_child(cold_, slot.child(0), env);
    return dispatch_status::Pending;
  }
  // Only a plain get: a CAS (gets, gats) or a touch (gat) belongs to the
  // server that answers it, and a meta client's reply is the cold server's
  // own (passthrough); those read the cold child only.
  if (plain_mg(slot.req)) {
    slot.push_frame(slot_frame{this, kCold, 0, 0});
    request_slot& c = slot.child(0);
    slot.add_call();
    dispatch_child(cold_, c, env);
    return dispatch_status::Pending;
  }
  if (slot.req.cmd != protocol::command::Get || slot.req.proto == protocol::protocol_kind::Meta) {
    return cold_.dispatch(slot, env);
  }
  slot.push_frame(slot_frame{this, kCold, 0, 0});
  slot.result.prepare(slot.req);
  request_slot& c = slot.child(0);
  c.key_map.clear();
  for (std::size_t i = 0; i < slot.req.keys.size(); ++i) c.key_map.push_back(static_cast<std::uint32_t>(i));
  slot.add_call();
  dispatch_child(cold_, c, env);
  return dispatch_status::Pending;
}

dispatch_status warm_up_route::resume(request_slot& slot, dispatch_env& env) const {
  switch (slot.top_frame().state) {
    case kCold: return plain_mg(slot.req) ? after_cold_mg(slot, env) : after_cold(slot, env);
    case kMetaClient: return after_warm_mg(slot, env);
    case kMetagetCold: {
      request_slot& cold = slot.child_at(0);
      const bool hit = cold.result.outcome == protocol::routed_outcome::Hits && cold.result.key_count() == 1 &&
                       cold.result.hit(0).found;
      if (hit) {
        std::swap(slot.result, cold.result);
        return dispatch_status::Done;
      }
      slot.top_frame().state = kMetagetWarm;
      slot.add_call();
      dispatch_child(warm_, slot.child(1), env);
      return dispatch_status::Pending;
    }
    case kMetagetWarm: std::swap(slot.result, slot.child_at(1).result); return dispatch_status::Done;
    case kMeta: return after_meta(slot, env);
    default: return after_get(slot, env);
  }
}

dispatch_status warm_up_route::after_cold(request_slot& slot, dispatch_env& env) const {
  request_slot& cold = slot.child_at(0);
  merge_hits(slot.result, cold.result, cold.key_map);
  const std::vector<std::uint32_t> missing = misses_of(slot.result);
  if (missing.empty()) return dispatch_status::Done;
  // The keys cold failed are asked of warm: only warm's failures count.
  slot.result.failed_keys = 0;
  slot_frame& f = slot.top_frame();
  if (exptime_ != 0) {
    send_get(slot, env, missing);
    return dispatch_status::Pending;
  }
  f.state = kMeta;
  f.count = static_cast<std::uint32_t>(missing.size());
  for (std::size_t j = 0; j < missing.size(); ++j) {
    request_slot& c = slot.child(1 + j);
    make_meta_get(c.req, slot.req.keys[missing[j]]);
    c.key_map.assign(1, missing[j]);
    slot.add_call();
    dispatch_child(warm_, c, env);
  }
  return dispatch_status::Pending;
}

dispatch_status warm_up_route::after_meta(request_slot& slot, dispatch_env& env) const {
  const std::uint32_t sent = slot.top_frame().count;
  std::vector<std::uint32_t> unknown;  // keys whose TTL warm cannot tell (an ascii backend)
  for (std::uint32_t j = 0; j < sent; ++j) {
    request_slot& c = slot.child_at(1 + j);
    const std::uint32_t i = c.key_map[0];
    const protocol::routed_result& r = c.result;
    if (r.outcome == protocol::routed_outcome::Refused) {
      unknown.push_back(i);
      continue;
    }
    if (r.outcome == protocol::routed_outcome::Failed) {
      ++slot.result.failed_keys;
      slot.result.set_failed(i, true);
      continue;
    }
    if (r.outcome != protocol::routed_outcome::Raw) continue;  // a miss or an error: a miss
    std::string_view value;
    std::uint32_t flags = 0;
    std::int64_t ttl = -1;
    if (!parse_meta_value(r.raw, value, flags, ttl)) continue;
    slot.result.set_hit(i, flags, 0, value);
    if (ttl == 0) continue;  // runs out now: answered, not filled
    fill(slot, env, i, ttl < 0 ? 0 : ttl);
  }
  if (unknown.empty()) return dispatch_status::Done;
  send_get(slot, env, unknown);
  return dispatch_status::Pending;
}

// A meta client's mg: cold's reply unless it is a miss or an error; then
// warm is asked both the client's mg (its reply is the client's) and
// `mg KEY t v f` (the fill's value and TTL), at once.
dispatch_status warm_up_route::after_cold_mg(request_slot& slot, dispatch_env& env) const {
  request_slot& cold = slot.child_at(0);
  if (severity_of(cold.result, cold.req) == severity::Success) {
    std::swap(slot.result, cold.result);
    return dispatch_status::Done;
  }
  slot.top_frame().state = kMetaClient;
  request_slot& asked = slot.child(1);
  slot.add_call();
  dispatch_child(warm_, asked, env);
  request_slot& fill_read = slot.child(2);
  make_meta_get(fill_read.req, slot.req.key());
  slot.add_call();
  dispatch_child(warm_, fill_read, env);
  return dispatch_status::Pending;
}

dispatch_status warm_up_route::after_warm_mg(request_slot& slot, dispatch_env& env) const {
  request_slot& asked = slot.child_at(1);
  request_slot& fill_read = slot.child_at(2);
  std::swap(slot.result, asked.result);
  std::string_view value;
  std::uint32_t flags = 0;
  std::int64_t ttl = -1;
  if (fill_read.result.outcome == protocol::routed_outcome::Raw &&
      parse_meta_value(fill_read.result.raw, value, flags, ttl)) {
    if (ttl != 0)
      send_add(slot.req.key(), value, flags, exptime_ != 0 ? exptime_ : std::max<std::int64_t>(ttl, 0), env);
  } else if (fill_read.result.outcome == protocol::routed_outcome::Refused && slot.req.meta.has('v') &&
             slot.result.outcome == protocol::routed_outcome::Hits && slot.result.key_count() == 1 &&
             slot.result.hit(0).found) {
    // An ascii warm backend (the TTL cannot be asked): the client's own
    // reply holds the value; filled with exptime, or no expiry.
    const protocol::routed_result::key_hit& h = slot.result.hit(0);
    send_add(slot.req.key(), slot.result.data(h), h.flags, exptime_, env);
  }
  return dispatch_status::Done;
}

void warm_up_route::send_get(request_slot& slot, dispatch_env& env, const std::vector<std::uint32_t>& keys) const {
  slot_frame& f = slot.top_frame();
  const std::size_t at = f.state == kMeta ? 1 + f.count : 1;
  f.state = kGet;
  f.saved = static_cast<std::int64_t>(at);
  request_slot& c = slot.child(at);
  c.req.keys.clear();
  c.key_map.clear();
  for (const std::uint32_t i : keys) {
    c.req.keys.push_back(slot.req.keys[i]);
    c.key_map.push_back(i);
  }
  slot.add_call();
  dispatch_child(warm_, c, env);
}

dispatch_status warm_up_route::after_get(request_slot& slot, dispatch_env& env) const {
  request_slot& c = slot.child_at(static_cast<std::size_t>(slot.top_frame().saved));
  merge_hits(slot.result, c.result, c.key_map);
  // exptime 0 here: warm speaks ascii and cannot tell the TTL left: no expiry.
  for (const std::uint32_t i : c.key_map) {
    if (slot.result.hit(i).found) fill(slot, env, i, exptime_);
  }
  return dispatch_status::Done;
}

void warm_up_route::fill(request_slot& slot, dispatch_env& env, std::size_t i, std::int64_t ttl) const {
  const protocol::routed_result::key_hit& h = slot.result.hit(i);
  send_add(slot.req.keys[i], slot.result.data(h), h.flags, ttl, env);
}

void warm_up_route::send_add(std::string_view key, std::string_view value, std::uint32_t flags, std::int64_t ttl,
                             dispatch_env& env) const {
  protocol::request add;
  add.cmd = protocol::command::Add;
  add.proto = protocol::protocol_kind::Ascii;
  add.keys.push_back(key);
  add.value = value;
  add.flags = flags;
  // memcached reads an exptime past 30 days as a unix time.
  add.exptime = ttl > kWarmUpRelativeMax ? static_cast<std::int64_t>(std::time(nullptr)) + ttl : ttl;
  // send() copies the key and value before it returns.
  if (env.async != nullptr && env.async->send(cold_, add)) {
    fills_.fetch_add(1, std::memory_order_relaxed);
  } else {
    route_counters::add(counters().async_dropped);
  }
}

// ---- the kind: options, how the config formats spell them, build.

namespace {

struct warm_up_options final : config::route_options {
  std::uint32_t exptime = 0;
  bool enable_metaget = true;  // mcrouter's; ithaca asks warm with mg whenever it speaks meta
};

constexpr config::child_slot kWarmUpSlots[] = {
    {"cold", "cold", "cold", false, 1},
    {"warm", "warm", "warm", false, 1},
};
constexpr config::option_spec kWarmUpOptions[] = {
    config::seconds_option<&warm_up_options::exptime>(
        "exptime", "exptime", "the TTL of a value filled into cold; 0: what the warm item has left"),
    config::flag_option<&warm_up_options::enable_metaget>(
        nullptr, "enable_metaget",
        "mcrouter's: ask warm for the TTL with a metaget (ithaca does when warm speaks meta)"),
};
constexpr route_stat kWarmUpStats[] = {
    {"warm_fills", "warm_up: values added to the cold child."},
};

const route* build_warm_up(tree_builder& b, const config::route_config& r) {
  const route* cold = b.child(r, "cold", true);
  if (cold == nullptr) return nullptr;
  const route* warm = b.child(r, "warm", true);
  if (warm == nullptr) return nullptr;
  return b.add<warm_up_route>(b.name_of(r), *cold, *warm, config::options_of<warm_up_options>(r).exptime);
}

constexpr config::route_kind_info kWarmUpInfo{
    "warm_up",
    "WarmUpRoute",
    "a cold route filled from a warm one on a miss",
    kWarmUpSlots,
    kWarmUpOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> { return std::make_shared<warm_up_options>(); },
};

}  // namespace

extern constinit const kind_module kWarmUpKind{kWarmUpInfo, build_warm_up, kWarmUpStats};

}  // namespace ithaca::route
