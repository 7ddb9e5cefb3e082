// The `l1l2_size_split` route (mcrouter's L1L2SizeSplitRoute): values of
// `threshold` bytes or more live in L2, with a sentinel in L1; smaller ones
// live in L1 only. L1 is a route (a pool), unlike ithaca's own `l1l2`.
//
// Set (text): below the threshold (or a threshold of 0, an exptime under
// `ttl_threshold`, a key too long to carry the sentinel's suffix) it goes to
// L1. Otherwise L2 is set first (so a reader never finds a sentinel whose
// value is missing) and, once L2 stored it, L1 gets the sentinel: the same
// key with an empty value and the flag bit 0x20 (mcrouter's
// MC_MSG_FLAG_SIZE_SPLIT) added to the client's flags; the client gets L1's
// reply, or L2's when L2 did not store. With `both_full_set` the whole value
// goes to L1 and, once stored, to L2 in the background (async_runner).
//
// Get / gets (text, one key or several): L1 is asked with `gets` (the CAS
// is what removes a dead sentinel). A hit with the sentinel bit is read
// from L2: the same key when the sentinel is empty, KEY|==|VALUE when it
// holds a number (mcrouter's lease-set sentinels). An L2 hit answers with
// L2's flags and, for gets, L1's CAS (so a `cas` reaches L1, which replaces
// the sentinel with the value: CAS always goes to L1). A sentinel whose L2
// value is missing, or whose L2 failed (no reply: down, timeout), is removed
// from L1 if unchanged (a `cas` with exptime -1 on its CAS: mcrouter's
// deleteSentinel); then a get answers an error (mcrouter's LOCAL_ERROR, or
// L2's failure), a gets reads L1 again, `retries` times (default 1). In a
// multi-key get such a key is a miss (a failed one, as a down server's).
//
// Lease-set (text) of a large value, as mcrouter: a random number R (a
// 32-bit decimal, per worker generator) names the copy in L2, which gets
// a plain set of KEY|==|R with the value; once L2 stored it, L1 gets the
// client's lease-set (its token) with R as the value and the sentinel bit.
// When L2 did not store, L1 gets the client's lease-set whole, its exptime
// cut to `failure_ttl` (when longer, or none). With `both_full_set` the
// lease-set goes whole to L1 under its own key and, once stored, to L2 as
// a set in the background (mcrouter renames the key to KEY|==|R in both,
// so a get of KEY then misses in L1: ithaca keeps the key).
//
// Lease-get (text): as a gets, but L1 is asked the client's lease-get. A
// miss (its token, or hot miss) is the client's, without a stale sentinel
// (mcrouter's doFilter); a sentinel hit reads L2 as above, a dead one is
// removed and L1 asked again `retries` times (then a new token comes).
//
// Everything else (binary and meta commands, add, cas, deletes, touches,
// arithmetic) goes to L1 as it is, as mcrouter sends every other operation
// to L1.
#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "async_runner.h"
#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"
#include "units.h"
#include "yaml_section.h"

namespace ithaca::route {

namespace {

using protocol::routed_outcome;

constexpr std::uint32_t kSizeSplitFlag = 0x20;  // mcrouter's MC_MSG_FLAG_SIZE_SPLIT
constexpr std::string_view kSizeSplitAlias = "|==|";
// mcrouter: the alias and a uint64 in decimal must fit after the key.
constexpr std::size_t kSizeSplitExtraKey = 4 + 20;
constexpr std::uint32_t kSizeSplitMaxRetries = 10;

class l1l2_size_split_route final : public route {
 public:
  struct config_values {
    std::uint64_t threshold;
    std::uint32_t ttl_threshold;
    bool both_full_set;
    std::uint32_t retries;
    std::uint32_t failure_ttl;
  };
  l1l2_size_split_route(std::string name, const route& l1, const route& l2, config_values v)
      : route(std::move(name)), l1_(l1), l2_(l2), v_(v) {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "l1l2_size_split"; }
  std::string handle_name() const override { return "l1l2-sizesplit"; }  // mcrouter's routeName()
  std::vector<const route*> children() const override { return {&l1_, &l2_}; }
  void kind_counters(const counter_out& out) const override {
    out("split_sets", split_sets_.load(std::memory_order_relaxed));
    out("split_reads", split_reads_.load(std::memory_order_relaxed));
    out("sentinels_removed", removed_.load(std::memory_order_relaxed));
  }

 private:
  // frame.state: whose calls are out.
  enum phase : std::uint32_t {
    SetL2,       // child 0: the client's set on L2
    SetL1,       // child 1: the sentinel on L1
    SetBoth,     // child 0: the whole value on L1 (both_full_set)
    LeaseSetL2,  // child 0: a set of KEY|==|R on L2
    LeaseSetL1,  // child 1: the lease-set of the sentinel R (or the whole value) on L1
    ReadL1,      // child 0: gets on L1 for the keys in its key_map
    ReadL2,      // children 1..count: a get on L2 per sentinel
    RemoveDead,  // children count+1..: cas expiring dead sentinels
  };
  bool goes_to_l1(const protocol::request& req) const;
  dispatch_status lease_set(request_slot& slot, dispatch_env& env) const;
  dispatch_status lease_set_l1(request_slot& slot, dispatch_env& env) const;
  void read_l1(request_slot& slot, dispatch_env& env, std::vector<std::uint32_t> keys) const;
  dispatch_status after_l1(request_slot& slot, dispatch_env& env) const;
  dispatch_status after_l2(request_slot& slot, dispatch_env& env) const;
  dispatch_status finish_reads(request_slot& slot, dispatch_env& env) const;

  const route& l1_;
  const route& l2_;
  config_values v_;
  mutable std::atomic<std::uint64_t> split_sets_{0}, split_reads_{0}, removed_{0};
};

bool split_read(const protocol::request& r) {
  return r.proto == protocol::protocol_kind::Ascii &&
         (r.cmd == protocol::command::Get || r.cmd == protocol::command::Gets || r.cmd == protocol::command::LeaseGet);
}

// The number that names a lease-set's copy in L2 (mcrouter's 32-bit
// mt19937 draw). [any worker: one generator per thread]
std::uint32_t size_split_suffix() {
  thread_local std::mt19937 gen{std::random_device{}()};
  return static_cast<std::uint32_t>(gen());
}

// `n` in decimal into `out` (at least 10 bytes); its length.
std::size_t size_split_decimal(char* out, std::uint32_t n) {
  const auto r = std::to_chars(out, out + 10, n);
  return static_cast<std::size_t>(r.ptr - out);
}

// How an L2 read of a sentinel ended.
enum class l2_read { Hit, Missing, Failed, Error };

l2_read l2_read_of(const protocol::routed_result& r) {
  switch (r.outcome) {
    case routed_outcome::Hits:
      if (r.key_count() == 1 && r.hit(0).found) return l2_read::Hit;
      return r.failed_keys > 0 ? l2_read::Failed : l2_read::Missing;
    case routed_outcome::Failed: return l2_read::Failed;
    default: return l2_read::Error;
  }
}

}  // namespace

bool l1l2_size_split_route::goes_to_l1(const protocol::request& req) const {
  return v_.threshold == 0 || req.value.size() < v_.threshold ||
         (v_.ttl_threshold != 0 && req.exptime < static_cast<std::int64_t>(v_.ttl_threshold)) ||
         req.key().size() + kSizeSplitExtraKey > protocol::kMaxKeyLength;
}

dispatch_status l1l2_size_split_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  const protocol::request& req = slot.req;
  const bool text = req.proto == protocol::protocol_kind::Ascii;
  if (text && req.cmd == protocol::command::Set && !goes_to_l1(req)) {
    route_counters::add(split_sets_);
    slot.push_frame({this, v_.both_full_set ? SetBoth : SetL2, 0, 0});
    request_slot& c = slot.child(0);
    c.req.noreply = false;  // the next step needs its answer
    slot.add_call();
    dispatch_child(v_.both_full_set ? l1_ : l2_, c, env);
    return dispatch_status::Pending;
  }
  if (text && req.cmd == protocol::command::LeaseSet && !goes_to_l1(req)) return lease_set(slot, env);
  if (split_read(req)) {
    slot.result.prepare(req);
    slot.result.outcome = routed_outcome::Hits;  // every key a miss until found
    slot.push_frame({this, ReadL1, 0, static_cast<std::int64_t>(v_.retries)});
    std::vector<std::uint32_t> all(req.keys.size());
    for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
    read_l1(slot, env, std::move(all));
    return dispatch_status::Pending;
  }
  return l1_.dispatch(slot, env);
}

// A large lease-set: child 0 sets KEY|==|R on L2 (the key in its scratch),
// or with both_full_set child 0 is the lease-set itself on L1.
dispatch_status l1l2_size_split_route::lease_set(request_slot& slot, dispatch_env& env) const {
  route_counters::add(split_sets_);
  const std::uint32_t suffix = v_.both_full_set ? 0 : size_split_suffix();
  slot.push_frame({this, v_.both_full_set ? SetBoth : LeaseSetL2, 0, static_cast<std::int64_t>(suffix)});
  request_slot& c = slot.child(0);
  c.req.noreply = false;  // the next step needs its answer
  slot.add_call();
  if (v_.both_full_set) {
    dispatch_child(l1_, c, env);
    return dispatch_status::Pending;
  }
  const std::string_view key = slot.req.key();  // goes_to_l1: it has room for the suffix
  char* p = c.req.scratch.data();
  std::memmove(p, key.data(), key.size());
  std::memcpy(p + key.size(), kSizeSplitAlias.data(), kSizeSplitAlias.size());
  const std::size_t n = size_split_decimal(p + key.size() + kSizeSplitAlias.size(), suffix);
  c.req.keys.set(0, std::string_view(p, key.size() + kSizeSplitAlias.size() + n));
  c.req.cmd = protocol::command::Set;
  c.req.lease_token = 0;
  dispatch_child(l2_, c, env);
  return dispatch_status::Pending;
}

// L2 answered a large lease-set: L1 gets the client's lease-set with the
// sentinel R (its decimal in child 1's scratch), or, L2 not stored, with
// the whole value and its exptime cut to failure_ttl.
dispatch_status l1l2_size_split_route::lease_set_l1(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  const bool stored = slot.child_at(0).result.outcome == routed_outcome::Stored;
  f.state = LeaseSetL1;
  request_slot& c = slot.child(1);
  c.req.noreply = false;
  if (stored) {
    char* p = c.req.scratch.data();
    c.req.value = std::string_view(p, size_split_decimal(p, static_cast<std::uint32_t>(f.saved)));
    c.req.flags |= kSizeSplitFlag;
  } else if (c.req.exptime == 0 || c.req.exptime > static_cast<std::int64_t>(v_.failure_ttl)) {
    c.req.exptime = v_.failure_ttl;
  }
  slot.add_call();
  dispatch_child(l1_, c, env);
  return dispatch_status::Pending;
}

void l1l2_size_split_route::read_l1(request_slot& slot, dispatch_env& env, std::vector<std::uint32_t> keys) const {
  slot.top_frame().state = ReadL1;
  request_slot& c = slot.child_for_keys(0, keys.size() == slot.req.keys.size() ? std::vector<std::uint32_t>{} : keys);
  // The CAS that removes a dead sentinel (a lease-get's mg asks it too).
  if (slot.req.cmd != protocol::command::LeaseGet) c.req.cmd = protocol::command::Gets;
  slot.add_call();
  dispatch_child(l1_, c, env);
}

dispatch_status l1l2_size_split_route::resume(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  switch (static_cast<phase>(f.state)) {
    case SetL2: {
      request_slot& l2 = slot.child_at(0);
      if (l2.result.outcome != routed_outcome::Stored) {
        slot.result = l2.result;
        return dispatch_status::Done;
      }
      f.state = SetL1;
      request_slot& c = slot.child(1);
      c.req.value = std::string_view();
      c.req.flags |= kSizeSplitFlag;
      c.req.noreply = false;
      slot.add_call();
      dispatch_child(l1_, c, env);
      return dispatch_status::Pending;
    }
    case SetL1:
    case LeaseSetL1: slot.result = slot.child_at(1).result; return dispatch_status::Done;
    case LeaseSetL2: return lease_set_l1(slot, env);
    case SetBoth: {
      slot.result = slot.child_at(0).result;
      if (slot.result.outcome == routed_outcome::Stored && env.async != nullptr) {
        protocol::request copy = slot.req;
        copy.noreply = true;
        copy.cmd = protocol::command::Set;  // a lease-set's copy too: its token is L1's
        copy.lease_token = 0;
        if (!env.async->send(l2_, copy)) route_counters::add(counters().async_dropped);
      }
      return dispatch_status::Done;
    }
    case ReadL1: return after_l1(slot, env);
    case ReadL2: return after_l2(slot, env);
    case RemoveDead: return finish_reads(slot, env);
  }
  return dispatch_status::Done;
}

// L1 answered: plain hits are the client's; each sentinel gets a get on L2
// in a child of its own (its key in the child's scratch, L1's CAS in its
// req.cas for the removal).
dispatch_status l1l2_size_split_route::after_l1(request_slot& slot, dispatch_env& env) const {
  request_slot& l1 = slot.child_at(0);
  protocol::routed_result& r = l1.result;
  const bool lease = slot.req.cmd == protocol::command::LeaseGet;  // one key, L1's answer is whole
  const bool whole = lease || (l1.key_map.size() == slot.req.keys.size() && slot.top_frame().saved == v_.retries);
  if (r.outcome == routed_outcome::LeaseToken && r.key_count() == 1 && r.hit(0).found &&
      (r.hit(0).flags & kSizeSplitFlag) != 0) {
    // A stale sentinel with the token: a plain miss (mcrouter's doFilter).
    const std::uint64_t token = r.number;
    r.prepare(slot.req);
    r.outcome = routed_outcome::LeaseToken;
    r.number = token;
  }
  if (r.outcome != routed_outcome::Hits) {
    if (whole) {
      slot.result = r;  // L1's error or failure, as it is
      return dispatch_status::Done;
    }
    merge_hits(slot.result, r, l1.key_map);  // retried keys: failed misses
    return dispatch_status::Done;
  }
  std::uint32_t sent = 0;
  for (std::size_t k = 0; k < l1.key_map.size(); ++k) {
    const std::uint32_t i = l1.key_map[k];
    const protocol::routed_result::key_hit& h = r.hit(k);
    if (h.failed) {
      slot.result.set_failed(i, true);
      ++slot.result.failed_keys;
      continue;
    }
    if (!h.found) continue;
    const std::string_view value = r.data(h);
    if ((h.flags & kSizeSplitFlag) == 0) {
      slot.result.set_hit(i, h.flags, h.cas, value);
      continue;
    }
    const std::string_view key = slot.req.keys[i];
    const std::size_t length = value.empty() ? key.size() : key.size() + kSizeSplitAlias.size() + value.size();
    request_slot& c = slot.child(1 + sent);
    if (length > c.req.scratch.size()) {
      // No L2 key can be made of it: a sentinel ithaca cannot follow.
      slot.result.set_failed(i, true);
      ++slot.result.failed_keys;
      continue;
    }
    char* p = c.req.scratch.data();
    std::memcpy(p, key.data(), key.size());
    if (!value.empty()) {
      std::memcpy(p + key.size(), kSizeSplitAlias.data(), kSizeSplitAlias.size());
      std::memcpy(p + key.size() + kSizeSplitAlias.size(), value.data(), value.size());
    }
    c.req.cmd = protocol::command::Get;
    c.req.keys.clear();
    c.req.keys.push_back(std::string_view(p, length));
    c.req.cas = h.cas;  // for the removal of a dead sentinel
    c.key_map.assign(1, i);
    ++sent;
  }
  if (sent == 0) return dispatch_status::Done;
  route_counters::add(split_reads_);
  slot_frame& f = slot.top_frame();
  f.state = ReadL2;
  f.count = sent;
  for (std::uint32_t j = 0; j < sent; ++j) {
    slot.add_call();
    dispatch_child(l2_, slot.child_at(1 + j), env);
  }
  return dispatch_status::Pending;
}

// L2 answered every sentinel: hits are the client's (L2's flags, L1's CAS);
// a missing value, or an L2 that did not answer, has its sentinel removed
// (mcrouter: on a miss, and on a failover error, not on an error reply).
dispatch_status l1l2_size_split_route::after_l2(request_slot& slot, dispatch_env& env) const {
  const std::uint32_t sent = slot.top_frame().count;
  std::uint32_t removals = 0;
  for (std::uint32_t j = 0; j < sent; ++j) {
    request_slot& c = slot.child_at(1 + j);
    const l2_read how = l2_read_of(c.result);
    const std::uint32_t i = c.key_map[0];
    if (how == l2_read::Hit) {
      const protocol::routed_result::key_hit& h = c.result.hit(0);
      slot.result.set_hit(i, h.flags, c.req.cas, c.result.data(h));
      continue;
    }
    if (how == l2_read::Error) continue;
    request_slot& rm = slot.child(1 + sent + removals);
    rm.req.cmd = protocol::command::Cas;
    rm.req.keys.clear();
    rm.req.keys.push_back(slot.req.keys[i]);
    rm.req.value = std::string_view();
    rm.req.flags = 0;
    rm.req.exptime = -1;  // expired at once: the sentinel is gone if unchanged
    rm.req.cas = c.req.cas;
    rm.req.noreply = false;
    rm.key_map.assign(1, i);
    ++removals;
  }
  if (removals == 0) return finish_reads(slot, env);
  slot.top_frame().state = RemoveDead;
  for (std::uint32_t m = 0; m < removals; ++m) {
    route_counters::add(removed_);
    slot.add_call();
    dispatch_child(l1_, slot.child_at(1 + sent + m), env);
  }
  return dispatch_status::Pending;
}

// The sentinels whose L2 read did not hit: a gets reads L1 again for the
// missing ones while retries are left; otherwise each is answered (one key:
// the error itself; several: a failed miss).
dispatch_status l1l2_size_split_route::finish_reads(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  const std::uint32_t sent = f.count;
  const bool single = slot.req.keys.size() == 1;
  std::vector<std::uint32_t> again;
  for (std::uint32_t j = 0; j < sent; ++j) {
    const request_slot& c = slot.child_at(1 + j);
    const l2_read how = l2_read_of(c.result);
    if (how == l2_read::Hit) continue;
    const std::uint32_t i = c.key_map[0];
    const bool retried = slot.req.cmd == protocol::command::Gets || slot.req.cmd == protocol::command::LeaseGet;
    if (how == l2_read::Missing && retried && f.saved > 0) {
      again.push_back(i);
      continue;
    }
    if (single) {
      if (how == l2_read::Missing) {
        refuse(slot.req, slot.result, "SERVER_ERROR local error", protocol::binary_status::InternalError);
      } else {
        slot.result = c.result;  // L2's error line or failure (one key, as the client's)
      }
      return dispatch_status::Done;
    }
    slot.result.set_failed(i, true);
    ++slot.result.failed_keys;
  }
  if (again.empty()) return dispatch_status::Done;
  --f.saved;
  read_l1(slot, env, std::move(again));
  return dispatch_status::Pending;
}

// ---- the kind: options, how the config formats spell them, build.

namespace {

struct size_split_options final : config::route_options {
  std::uint64_t threshold = 0;
  std::uint32_t ttl_threshold = 0;
  std::uint32_t failure_ttl = 60;
  bool both_full_set = false;
  std::uint32_t retries = 1;
};

// threshold: YAML a size (8, 1k, 64KiB), mcrouter an integer of bytes.
void size_split_read_threshold(config::route_kind_reader& in, const char* key, config::route_config&,
                               config::route_options& opts) {
  const YAML::Node& v = *in.value(key);
  std::uint64_t n = 0;
  const bool yaml = in.format() == config::route_format::Yaml;
  const std::string text = v.IsScalar() ? v.Scalar() : "";
  if (!(yaml ? config::parse_size(text, n) : config::parse_unsigned(text, n))) {
    in.fail_node(v, yaml ? "threshold: expected a size in bytes (8, 1k, 64KiB), got " + config::describe_node(v)
                         : "L1L2SizeSplitRoute: threshold is not an integer");
    return;
  }
  static_cast<size_split_options&>(opts).threshold = n;
}
std::string size_split_show_threshold(const config::route_options& o) {
  return std::to_string(static_cast<const size_split_options&>(o).threshold);
}

void size_split_read_retries(config::route_kind_reader& in, const char* key, config::route_config&,
                             config::route_options& opts) {
  const YAML::Node& v = *in.value(key);
  std::uint64_t n = 0;
  const bool yaml = in.format() == config::route_format::Yaml;
  if (!v.IsScalar() || !config::parse_unsigned(v.Scalar(), n)) {
    in.fail_node(v, yaml ? "retries: expected an integer from 1 to 10, got " + config::describe_node(v)
                         : "L1L2SizeSplitRoute: number of retries is not an integer");
    return;
  }
  if (n == 0 || n > kSizeSplitMaxRetries) {
    in.fail_node(v, yaml     ? "retries: expected an integer from 1 to 10, got " + config::describe_node(v)
                    : n == 0 ? "L1L2SizeSplitRoute: number of retries must be > 0"
                             : "L1L2SizeSplitRoute: maximum number of retries is 10");
    return;
  }
  static_cast<size_split_options&>(opts).retries = static_cast<std::uint32_t>(n);
}
std::string size_split_show_retries(const config::route_options& o) {
  return std::to_string(static_cast<const size_split_options&>(o).retries);
}

constexpr config::child_slot kSizeSplitSlots[] = {
    {"l1", "l1", "l1", false, 1, "L1L2SizeSplitRoute: no l1 route"},
    {"l2", "l2", "l2", false, 1, "L1L2SizeSplitRoute: no l2 route"},
};
constexpr config::option_spec kSizeSplitOptions[] = {
    config::custom_option("threshold", "threshold",
                          "values of this many bytes or more go to L2, a sentinel to L1 (0: all to L1)",
                          size_split_read_threshold, size_split_show_threshold, "8", "8", true),
    config::seconds_option<&size_split_options::ttl_threshold>(
        "ttl_threshold", "ttl_threshold", "writes with an exptime under this stay in L1 whatever their size"),
    config::seconds_option<&size_split_options::failure_ttl>(
        "failure_ttl", "failure_ttl",
        "the TTL cap of a large lease-set kept whole in L1 when L2 did not store it"),
    config::flag_option<&size_split_options::both_full_set>("both_full_set", "both_full_set",
                                                            "large values go whole to L1, and to L2 in the background"),
    config::custom_option("retries", "retries", "how many times a gets reads L1 again after a dead sentinel (1 to 10)",
                          size_split_read_retries, size_split_show_retries, "3", "3"),
};

void finish_size_split(config::route_kind_reader& reader, config::route_config& r) {
  if (config::options_of<size_split_options>(r).failure_ttl == 0 && reader.has("failure_ttl")) {
    if (reader.format() == config::route_format::Yaml) {
      reader.fail_at("failure_ttl", "failure_ttl: must not be zero");
    } else {
      reader.fail("L1L2SizeSplitRoute: failure_ttl must not be zero");
    }
  }
}

const route* build_size_split(tree_builder& b, const config::route_config& r) {
  const route* l1 = b.child(r, "l1", true);
  const route* l2 = b.child(r, "l2", true);
  if (l1 == nullptr || l2 == nullptr) return nullptr;
  const auto& o = config::options_of<size_split_options>(r);
  return b.add<l1l2_size_split_route>(
      b.name_of(r), *l1, *l2,
      l1l2_size_split_route::config_values{o.threshold, o.ttl_threshold, o.both_full_set, o.retries, o.failure_ttl});
}

constexpr route_stat kSizeSplitStats[] = {
    {"split_sets", "l1l2_size_split: sets over the threshold (to L2 with a sentinel in L1, or to both)."},
    {"split_reads", "l1l2_size_split: reads that found sentinels in L1 and asked L2."},
    {"sentinels_removed", "l1l2_size_split: sentinels removed from L1 (their L2 value missing or L2 down)."},
};

constexpr config::route_kind_info kSizeSplitInfo{
    "l1l2_size_split",
    "L1L2SizeSplitRoute",
    "large values in L2 with a sentinel in L1, small ones in L1",
    kSizeSplitSlots,
    kSizeSplitOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> {
      return std::make_shared<size_split_options>();
    },
    config::route_kind_info::collapse::None,
    finish_size_split,
};

}  // namespace

extern constinit const kind_module kL1L2SizeSplitKind{kSizeSplitInfo, build_size_split, kSizeSplitStats};

}  // namespace ithaca::route
