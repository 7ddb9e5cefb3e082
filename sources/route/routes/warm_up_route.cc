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
// left (unless mcrouter's `enable_metaget` is false: then no expiry), asked with `mg KEY t v f` (one per missing key) where the warm pool
// speaks meta. An ascii pool's codec refuses that mg (a meta client's
// request), so those keys are read with a plain get and, beside it, one
// mcrouter `metaget` each (as mcrouter's getExptimeFromRoute asks), which
// the codec sends as `mg KEY t` over either protocol: memcached 1.6 answers
// it on its ascii port. A key the metaget finds gone, or whose TTL runs out
// as it is read, is answered but not filled. A backend that cannot tell
// (no meta: it answers ERROR) keeps the fill without expiry, as before:
// ithaca then has nothing better (mcrouter would not fill at all).
//
// A meta client's `mg` that only reads (no T, N, R, E or q) is read from
// warm the same way on a miss or an error on cold: warm is sent the client's
// mg (its reply is the client's, as warm gives it) and `mg KEY t v f` for
// the fill (with an ascii warm pool, the client's own reply holds the value
// when it asked for it, v, and a metaget the TTL).
//
// A text lease-get (mcrouter's WarmUpRoute): cold's answer when it is a hit
// or a hot miss; on a miss with a token, warm is read (a get, and a metaget
// for the TTL) and on a hit there cold is filled with a detached lease-set
// carrying cold's token, and the client gets warm's value; otherwise cold's
// token is the client's.
//
// mcrouter's metaget: cold's answer, or warm's when cold misses (no fill).
//
// Everything else (sets, deletes, arithmetic, touches, gets/gats/gat whose
// CAS or TTL belongs to the cold server, other meta commands) goes to the
// cold child only: the client keeps the warm pool consistent.
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
  warm_up_route(std::string name, const route& cold, const route& warm, std::uint32_t exptime, bool ask);
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
  dispatch_status after_lease_cold(request_slot& slot, dispatch_env& env) const;
  dispatch_status after_lease_warm(request_slot& slot, dispatch_env& env) const;
  dispatch_status after_mg_ttl(request_slot& slot, dispatch_env& env) const;
  void send_get(request_slot& slot, dispatch_env& env, const std::vector<std::uint32_t>& keys) const;
  // A metaget of `key` to warm in child slot `at` (key_map: `index`).
  void send_metaget(request_slot& slot, dispatch_env& env, std::size_t at, std::string_view key,
                    std::uint32_t index) const;
  // An `add` of key `i`'s value (in slot.result) to the cold child.
  void fill(request_slot& slot, dispatch_env& env, std::size_t i, std::int64_t ttl) const;
  // A detached write of a value to cold: an `add`, or a lease-set with
  // `token` (command::LeaseSet).
  void send_fill(protocol::command cmd, std::string_view key, std::string_view value, std::uint32_t flags,
                 std::int64_t ttl, std::uint64_t token, dispatch_env& env) const;
  void send_add(std::string_view key, std::string_view value, std::uint32_t flags, std::int64_t ttl,
                dispatch_env& env) const {
    send_fill(protocol::command::Add, key, value, flags, ttl, 0, env);
  }
  const route& cold_;
  const route& warm_;
  std::uint32_t exptime_;                        // the fill's TTL when not asked (0: none)
  bool ask_;                                     // exptime 0 and enable_metaget: the TTL warm's item has left
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
  kLeaseCold = 6,    // a text lease-get: child 0 on cold
  kLeaseWarm = 7,    // its miss: child 1 a get on warm, child 2 a metaget (exptime 0)
  kMgTtl = 8,        // a meta client's mg over an ascii warm pool: child 3 a metaget for the fill's TTL
};

// mcrouter's lease-get token meaning "hot miss, another reader fills it".
constexpr std::uint64_t kWarmUpWaitToken = 1;

// What a fill's TTL is, from a warm metaget's answer (its remaining seconds
// in `number`, -1: never). Unknown: the backend cannot tell (an error line,
// no meta); Skip: the item is gone or runs out now (or warm failed).
struct warm_ttl {
  enum kind_t : std::uint8_t { Known, Unknown, Skip } kind;
  std::int64_t seconds;  // Known: 0 means no expiry
};
warm_ttl warm_ttl_of(const protocol::routed_result& r) {
  using protocol::routed_outcome;
  if (r.outcome == routed_outcome::Hits && r.key_count() == 1) {
    if (!r.hit(0).found) return {warm_ttl::Skip, 0};
    const auto t = static_cast<std::int64_t>(r.number);
    if (t == 0) return {warm_ttl::Skip, 0};
    return {warm_ttl::Known, t < 0 ? 0 : t};
  }
  if (r.outcome == routed_outcome::ErrorLine || r.outcome == routed_outcome::Refused) return {warm_ttl::Unknown, 0};
  return {warm_ttl::Skip, 0};
}

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

warm_up_route::warm_up_route(std::string name, const route& cold, const route& warm, std::uint32_t exptime,
                             bool ask)
    : route(std::move(name)), cold_(cold), warm_(warm), exptime_(exptime), ask_(exptime == 0 && ask) {}

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
  if (slot.req.cmd == protocol::command::LeaseGet && slot.req.proto == protocol::protocol_kind::Ascii) {
    slot.push_frame(slot_frame{this, kLeaseCold, 0, 0});
    slot.add_call();
    dispatch_child(cold_, slot.child(0), env);
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
    case kLeaseCold: return after_lease_cold(slot, env);
    case kLeaseWarm: return after_lease_warm(slot, env);
    case kMgTtl: return after_mg_ttl(slot, env);
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
  if (!ask_) {
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
      send_add(slot.req.key(), value, flags, !ask_ ? exptime_ : std::max<std::int64_t>(ttl, 0), env);
  } else if (fill_read.result.outcome == protocol::routed_outcome::Refused && slot.req.meta.has('v') &&
             slot.result.outcome == protocol::routed_outcome::Hits && slot.result.key_count() == 1 &&
             slot.result.hit(0).found) {
    // An ascii warm pool (its codec refuses mg t v f): the client's own
    // reply holds the value; filled with exptime, or with the TTL a
    // metaget tells.
    if (ask_) {
      slot.top_frame().state = kMgTtl;
      send_metaget(slot, env, 3, slot.req.key(), 0);
      return dispatch_status::Pending;
    }
    const protocol::routed_result::key_hit& h = slot.result.hit(0);
    send_add(slot.req.key(), slot.result.data(h), h.flags, exptime_, env);
  }
  return dispatch_status::Done;
}

dispatch_status warm_up_route::after_mg_ttl(request_slot& slot, dispatch_env& env) const {
  const warm_ttl t = warm_ttl_of(slot.child_at(3).result);
  if (t.kind != warm_ttl::Skip) {
    const protocol::routed_result::key_hit& h = slot.result.hit(0);
    send_add(slot.req.key(), slot.result.data(h), h.flags, t.seconds, env);
  }
  return dispatch_status::Done;
}

// Cold answered a lease-get: a hit, a hot miss or an error is the client's;
// a miss with a token reads warm.
dispatch_status warm_up_route::after_lease_cold(request_slot& slot, dispatch_env& env) const {
  request_slot& cold = slot.child_at(0);
  const protocol::routed_result& r = cold.result;
  const bool miss = r.outcome == protocol::routed_outcome::LeaseToken && r.number > kWarmUpWaitToken &&
                    !(r.key_count() == 1 && r.hit(0).found);
  if (!miss) {
    std::swap(slot.result, cold.result);
    return dispatch_status::Done;
  }
  slot.top_frame().state = kLeaseWarm;
  request_slot& get = slot.child(1);
  get.req.cmd = protocol::command::Get;
  get.req.lease_token = 0;
  slot.add_call();
  dispatch_child(warm_, get, env);
  if (ask_) send_metaget(slot, env, 2, slot.req.key(), 0);
  return dispatch_status::Pending;
}

// Warm answered a lease-get's miss: a hit fills cold with cold's token and
// is the client's (mcrouter's); without a TTL to fill with (the item gone
// or running out), cold's token is.
dispatch_status warm_up_route::after_lease_warm(request_slot& slot, dispatch_env& env) const {
  request_slot& cold = slot.child_at(0);
  request_slot& get = slot.child_at(1);
  const protocol::routed_result& w = get.result;
  const bool hit = w.outcome == protocol::routed_outcome::Hits && w.key_count() == 1 && w.hit(0).found;
  const warm_ttl t = !ask_ ? warm_ttl{warm_ttl::Known, exptime_} : warm_ttl_of(slot.child_at(2).result);
  if (!hit || t.kind == warm_ttl::Skip) {
    std::swap(slot.result, cold.result);
    return dispatch_status::Done;
  }
  const protocol::routed_result::key_hit& h = w.hit(0);
  send_fill(protocol::command::LeaseSet, slot.req.key(), w.data(h), h.flags, t.seconds, cold.result.number, env);
  std::swap(slot.result, get.result);
  return dispatch_status::Done;
}

// A get of `keys` on warm in child `saved`; when the TTL is asked (exptime
// 0), one metaget per key in the children after it (count).
void warm_up_route::send_get(request_slot& slot, dispatch_env& env, const std::vector<std::uint32_t>& keys) const {
  slot_frame& f = slot.top_frame();
  const std::size_t at = f.state == kMeta ? 1 + f.count : 1;
  f.state = kGet;
  f.saved = static_cast<std::int64_t>(at);
  f.count = ask_ ? static_cast<std::uint32_t>(keys.size()) : 0;
  request_slot& c = slot.child(at);
  c.req.keys.clear();
  c.key_map.clear();
  for (const std::uint32_t i : keys) {
    c.req.keys.push_back(slot.req.keys[i]);
    c.key_map.push_back(i);
  }
  slot.add_call();
  dispatch_child(warm_, c, env);
  for (std::uint32_t j = 0; j < f.count; ++j) send_metaget(slot, env, at + 1 + j, slot.req.keys[keys[j]], keys[j]);
}

void warm_up_route::send_metaget(request_slot& slot, dispatch_env& env, std::size_t at, std::string_view key,
                                 std::uint32_t index) const {
  request_slot& m = slot.child(at);
  m.req.clear();
  m.req.cmd = protocol::command::McMetaget;
  m.req.proto = protocol::protocol_kind::Ascii;
  m.req.keys.push_back(key);  // the parent's view, valid while the parent is
  m.key_map.assign(1, index);
  slot.add_call();
  dispatch_child(warm_, m, env);
}

dispatch_status warm_up_route::after_get(request_slot& slot, dispatch_env& env) const {
  const slot_frame& f = slot.top_frame();
  const auto at = static_cast<std::size_t>(f.saved);
  request_slot& c = slot.child_at(at);
  merge_hits(slot.result, c.result, c.key_map);
  for (std::size_t j = 0; j < c.key_map.size(); ++j) {
    const std::uint32_t i = c.key_map[j];
    if (!slot.result.hit(i).found) continue;
    if (f.count == 0) {
      fill(slot, env, i, exptime_);
      continue;
    }
    const warm_ttl t = warm_ttl_of(slot.child_at(at + 1 + j).result);
    if (t.kind != warm_ttl::Skip) fill(slot, env, i, t.seconds);
  }
  return dispatch_status::Done;
}

void warm_up_route::fill(request_slot& slot, dispatch_env& env, std::size_t i, std::int64_t ttl) const {
  const protocol::routed_result::key_hit& h = slot.result.hit(i);
  send_add(slot.req.keys[i], slot.result.data(h), h.flags, ttl, env);
}

void warm_up_route::send_fill(protocol::command cmd, std::string_view key, std::string_view value,
                              std::uint32_t flags, std::int64_t ttl, std::uint64_t token, dispatch_env& env) const {
  protocol::request add;
  add.cmd = cmd;
  add.lease_token = token;
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
  bool enable_metaget = true;  // mcrouter's: false (and no exptime) fills without expiry, unasked
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
        "mcrouter's: ask warm for the TTL (mg t v f, or a metaget); false: fill without expiry"),
};
constexpr route_stat kWarmUpStats[] = {
    {"warm_fills", "warm_up: values added to the cold child."},
};

const route* build_warm_up(tree_builder& b, const config::route_config& r) {
  const route* cold = b.child(r, "cold", true);
  if (cold == nullptr) return nullptr;
  const route* warm = b.child(r, "warm", true);
  if (warm == nullptr) return nullptr;
  const auto& o = config::options_of<warm_up_options>(r);
  return b.add<warm_up_route>(b.name_of(r), *cold, *warm, o.exptime, o.enable_metaget);
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
