#include "failover_route.h"

#include "handle_walk.h"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <iterator>

#include "command_class.h"
#include "failover_counts.h"
#include "key_hash_part.h"
#include "mcrouter_json.h"
#include "pool_route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "yaml_section.h"

namespace ithaca::route {

namespace {

// A text get of several keys: asked per child slot, failed keys alone onward.
bool multi_get(const protocol::request& req) { return protocol::is_multikey_retrieval(req) && req.keys.size() > 1; }

// slot_frame::saved of a single-key step: the child asked (low 32 bits) and
// whether it was asked through child slot 0 with a tagged key; a split get;
// bits 34 up as below.
constexpr std::int64_t kFailoverTagged = std::int64_t{1} << 32;
constexpr std::int64_t kFailoverSplit = std::int64_t{1} << 33;
constexpr int kFailoverTriedShift = 34;
static_assert(kFailoverTriedShift + failover_order::kLeastFailuresTracked <= 64);
std::size_t failover_child_of(const slot_frame& f) { return static_cast<std::size_t>(f.saved & 0xffffffff); }
// Bits 34 up hold what the policy remembers of the steps before (a route
// has one policy, so they share them): under least failures the children
// tried after the first (failover_order::least_failures_next's `tried`);
// under the others the positions whose reply was a server marked down
// (failover_policy.h: tko_positions).
std::uint64_t failover_tried_of(const slot_frame& f) {
  return static_cast<std::uint64_t>(f.saved) >> kFailoverTriedShift;
}
tko_positions failover_tkos_of(const slot_frame& f) {
  return static_cast<tko_positions>(static_cast<std::uint64_t>(f.saved) >> kFailoverTriedShift);
}

bool server_marked_down(const protocol::routed_result& r) {
  return r.outcome == protocol::routed_outcome::Failed && r.failure == protocol::call_failure::Down;
}

// The tries `f` remembers, with the reply at its position added.
tko_positions failover_tkos_with(const slot_frame& f, const protocol::routed_result& r) {
  tko_positions t = failover_tkos_of(f);
  if (server_marked_down(r) && f.state < kTkoPositions) t |= tko_positions{1} << f.state;
  return t;
}

constexpr std::string_view kFailoverTagText = ":failover=1";

// mcrouter's failover tag: "k|#|x" becomes "k|#|x:failover=1" in the child
// slot's own scratch (a key with no hash stop, or too long, stays).
bool failover_tag_key(protocol::request& req) {
  if (req.keys.size() != 1) return false;
  const std::string_view key = req.keys[0];
  if (key.find(proxy::kHashStop) == std::string_view::npos) return false;
  if (key.size() + kFailoverTagText.size() > protocol::kMaxKeyLength) return false;
  char* buf = req.scratch.data();
  std::memmove(buf, key.data(), key.size());  // the key may be in scratch already (meta b)
  std::memcpy(buf + key.size(), kFailoverTagText.data(), kFailoverTagText.size());
  req.keys.set(0, std::string_view(buf, key.size() + kFailoverTagText.size()));
  return true;
}

const proxy::pool* pool_of_route(const route* r) {
  const auto* p = dynamic_cast<const pool_route*>(r);
  return p != nullptr ? &p->pool() : nullptr;
}

std::vector<const proxy::pool*> pools_of_routes(const std::vector<const route*>& routes) {
  std::vector<const proxy::pool*> out;
  for (const route* r : routes) out.push_back(pool_of_route(r));
  return out;
}

}  // namespace

failover_route::failover_route(std::string name, std::vector<const route*> children, options opts)
    : route(std::move(name)),
      children_(std::move(children)),
      errors_(opts.errors),
      feed_(static_cast<std::int64_t>(opts.limit_rate * 1000)),
      cap_(static_cast<std::int64_t>(opts.limit_burst * 1000)),
      tokens_(cap_),
      gutter_(opts.gutter),
      exptime_(opts.exptime),
      order_(opts.policy, pools_of_routes(children_)),
      tag_(opts.failover_tag),
      pairing_(opts.lease_pairing) {}

bool failover_route::splits(const protocol::request& req) const {
  return multi_get(req) && children_.size() > 1 && (!order_.in_order() || tag_);
}

std::vector<const route*> failover_route::targets_for(const protocol::request& req) const {
  std::vector<const route*> out;
  for (std::uint32_t p = 0; p < order_.max_tries(); ++p) out.push_back(children_[order_.child_at(p, req.key())]);
  return out;
}

dispatch_status failover_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  if (pairing_ && slot.req.cmd == protocol::command::LeaseSet) {
    // Where its lease-get went; any other token: the first child, alone.
    if (const auto p = pairs_.find(slot.req.lease_token); p && p->child < children_.size()) {
      slot.req.lease_token = p->token;
      return children_[p->child]->dispatch(slot, env);
    }
    return children_[0]->dispatch(slot, env);
  }
  if (feed_ > 0) {
    std::int64_t t = tokens_.load(std::memory_order_relaxed);
    while (t < cap_ && !tokens_.compare_exchange_weak(t, std::min(cap_, t + feed_), std::memory_order_relaxed)) {}
  }
  if (splits(slot.req)) {
    // One child slot per key, each a get of its own through this route.
    slot.push_frame(slot_frame{this, 0, 0, kFailoverSplit});
    dispatch_each_key(*this, slot, env);
    return dispatch_status::Pending;
  }
  slot.push_frame(slot_frame{this, 0, 0, 0});
  if (multi_get(slot.req) && children_.size() > 1) {
    // frame.state: the child asked last. Hits gather in slot.result.
    slot.result.prepare(slot.req);
    request_slot& c = slot.child_for_keys(0);
    slot.add_call();
    dispatch_child(*children_[0], c, env);
    return dispatch_status::Pending;
  }
  dispatch_child(*children_[0], slot, env);
  return dispatch_status::Pending;
}

// frame.state: the position in the policy's order of the child asked last;
// frame.count: the error tries so far (failover_policy.h).
bool failover_route::goes_on(const request_slot& slot, const slot_frame& f, const protocol::routed_result& r) const {
  const auto cls = static_cast<std::size_t>(protocol::operation_of(slot.req));
  if (f.state + 1 >= order_.max_tries() || f.state + 1 >= children_.size() || !fails_over(r, errors_[cls])) {
    return false;
  }
  if (f.count + (order_.error_try(r) ? 1u : 0u) >= order_.max_error_tries()) return false;
  // The gutter takes no deletes: its values expire instead.
  return !(gutter_ && protocol::classify(slot.req) == protocol::command_class::Delete);
}

// A reply that does not fail over ends the route where it arrives. (A
// multi-key get always comes back: its child's hits are merged in resume;
// so does a reply in a tagged child slot, and a lease-get to pair.)
bool failover_route::wants_resume(const request_slot& slot, const slot_frame& f) const {
  if ((f.saved & (kFailoverSplit | kFailoverTagged)) != 0) return true;
  if (multi_get(slot.req) && children_.size() > 1) return true;
  // Least failures counts every child's replies, here where each arrives.
  if (order_.notes_replies()) order_.note_reply(failover_child_of(f), fails_over(slot.result, kFailoverAll));
  if (pairing_ && slot.req.cmd == protocol::command::LeaseGet) return true;
  if (goes_on(slot, f, slot.result)) return true;
  count_reply(slot, f, slot.result, false, false);
  return false;
}

// mcrouter's FailoverRoute looks at each reply before the last try the
// policy allows (processReply: an error or TKO counted, a try counted), and
// at the last one only to tell whether every try failed; the deterministic
// order's collisions are counted when the failover ends without a reply
// that ends it (a success ends it before they are counted).
void failover_route::count_reply(const request_slot& slot, const slot_frame& f, const protocol::routed_result& r,
                                 bool went_on, bool limited) const {
  stats::failover_counts& fo = stats::failover_counts::instance();
  const std::uint32_t p = f.state;
  const std::uint32_t tries = std::min<std::uint32_t>(order_.max_tries(), static_cast<std::uint32_t>(children_.size()));
  const bool error = severity_of(r, slot.req) >= severity::Error;
  auto count_draws = [&](std::uint32_t upto) {
    const failover_draws d = order_.draws(upto, slot.req.key(), failover_tkos_with(f, r));
    stats::failover_counts::add(fo.num_collisions, d.collisions);
    stats::failover_counts::add(fo.num_failed_domain_collisions, d.failed_domain_collisions);
  };
  if (p >= 1 && p + 1 >= tries) {
    // The last try: mcrouter's final doFailover, whose reply is not processed.
    if (error) stats::failover_counts::add(fo.all_failed_count);
    count_draws(p);
    return;
  }
  const auto cls = static_cast<std::size_t>(protocol::operation_of(slot.req));
  if (!fails_over(r, errors_[cls])) return;
  if (error) stats::failover_counts::add(server_marked_down(r) ? fo.policy_tko_error : fo.policy_result_error);
  if (went_on || limited) return;
  if (tries <= 1) {
    if (error) stats::failover_counts::add(fo.all_failed_count);
    return;
  }
  // Stopped by max_error_tries: mcrouter had drawn the next child already.
  count_draws(std::min(p + 1, tries - 1));
}

bool failover_route::take_token() const {
  if (feed_ <= 0) return true;
  std::int64_t t = tokens_.load(std::memory_order_relaxed);
  do {
    if (t < 1000) {
      route_counters::add(counters().failover_limited);
      return false;
    }
  } while (!tokens_.compare_exchange_weak(t, t - 1000, std::memory_order_relaxed));
  return true;
}

// mcrouter's LeaseGet: a token from a failover child (or one that looks
// like a paired token already) is replaced by one of this route's.
void failover_route::pair_lease(request_slot& slot, std::size_t child) const {
  if (!pairing_ || slot.req.cmd != protocol::command::LeaseGet) return;
  if (slot.result.outcome != protocol::routed_outcome::LeaseToken || slot.result.number <= 1) return;
  if (child == 0 && !lease_pairs::is_paired(slot.result.number)) return;
  slot.result.number = pairs_.add(slot.result.number, static_cast<std::uint32_t>(child));
}

dispatch_status failover_route::resume_split(request_slot& slot) const {
  for (std::size_t i = 0; i < slot.children_in_use(); ++i) {
    request_slot& c = slot.child_at(i);
    merge_hits(slot.result, c.result, c.key_map);
  }
  return dispatch_status::Done;
}

dispatch_status failover_route::resume(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  if ((f.saved & kFailoverSplit) != 0) return resume_split(slot);
  if (multi_get(slot.req) && children_.size() > 1) return resume_multi(slot, env);
  if ((f.saved & kFailoverTagged) != 0) {
    // The tagged child slot's answer is the request's.
    std::swap(slot.result, slot.child_at(0).result);
    slot.result.forget_raw_pieces();  // their VALUE lines name the tagged key
    f.saved &= ~kFailoverTagged;
    if (order_.notes_replies()) order_.note_reply(failover_child_of(f), fails_over(slot.result, kFailoverAll));
  }
  const std::size_t child = failover_child_of(f);
  // A server marked down (TKO) costs no failover_limit token, as in
  // mcrouter: a dead pool's requests cost the limiter nothing, so a failover
  // on it is never refused for errors it did not make.
  const bool tko = server_marked_down(slot.result);
  const bool on = goes_on(slot, f, slot.result);
  const bool limited = on && !tko && !take_token();
  count_reply(slot, f, slot.result, on && !limited, limited);
  if (!on || limited) {
    pair_lease(slot, child);
    return dispatch_status::Done;
  }
  const tko_positions tkos = failover_tkos_with(f, slot.result);
  route_counters::add(counters().failovers);
  if (gutter_ && carries_exptime(slot.req)) {
    cap_exptime(slot.req, exptime_, static_cast<std::int64_t>(std::time(nullptr)));
    if (protocol::classify(slot.req) == protocol::command_class::Store) route_counters::add(counters().gutter_writes);
  }
  if (order_.error_try(slot.result)) f.count += 1;
  f.state += 1;
  std::size_t next;
  if (order_.notes_replies()) {
    std::uint64_t tried = failover_tried_of(f);
    if (child >= 1 && child <= failover_order::kLeastFailuresTracked) tried |= std::uint64_t{1} << (child - 1);
    next = order_.least_failures_next(tried, f.state, slot.req.key());
    f.saved = static_cast<std::int64_t>(next | (tried << kFailoverTriedShift));
  } else {
    next = order_.child_at(f.state, slot.req.key(), tkos);
    f.saved = static_cast<std::int64_t>(next | (std::uint64_t{tkos} << kFailoverTriedShift));
  }
  slot.release_reply();  // the next child prepares the result again
  if (tag_) {
    request_slot& c = slot.child(0);
    if (failover_tag_key(c.req)) {
      f.saved |= kFailoverTagged;
      slot.add_call();
      dispatch_child(*children_[next], c, env);
      return dispatch_status::Pending;
    }
  }
  dispatch_child(*children_[next], slot, env);
  return dispatch_status::Pending;
}

// The child asked last has answered: its hits join the others; the keys
// whose server failed (if its errors fail over) go to the next child alone.
dispatch_status failover_route::resume_multi(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  request_slot& last = slot.child_at(f.state);
  const auto cls = static_cast<std::size_t>(protocol::operation_of(slot.req));
  const bool onward = f.state + 1 < order_.max_tries() && fails_over(last.result, errors_[cls]) &&
                      f.count + (order_.error_try(last.result) ? 1u : 0u) < order_.max_error_tries();
  merge_hits(slot.result, last.result, last.key_map);
  if (!onward) return dispatch_status::Done;
  std::vector<std::uint32_t> failed;
  for (std::size_t i = 0; i < slot.result.key_count(); ++i) {
    if (slot.result.hit(i).failed && !slot.result.hit(i).found) failed.push_back(static_cast<std::uint32_t>(i));
  }
  if (failed.empty() || !take_token()) return dispatch_status::Done;
  route_counters::add(counters().failovers);
  if (order_.error_try(last.result)) f.count += 1;
  // Asked again: no longer failed unless the next child fails them too.
  for (const std::uint32_t i : failed) slot.result.set_failed(i, false);
  slot.result.failed_keys -=
      std::min<std::uint32_t>(slot.result.failed_keys, static_cast<std::uint32_t>(failed.size()));
  f.state += 1;
  request_slot& c = slot.child_for_keys(f.state, failed);
  // gat / gats into the gutter: their new TTL capped as any gutter write.
  if (gutter_ && carries_exptime(c.req)) cap_exptime(c.req, exptime_, static_cast<std::int64_t>(std::time(nullptr)));
  slot.add_call();
  dispatch_child(*children_[f.state], c, env);
  return dispatch_status::Pending;
}

std::string failover_route::handle_name() const {
  const std::string& n = name();
  return n == kind() ? std::string("failover") : "failover:" + n;
}

void failover_route::walk_handles(const protocol::request& req, handle_walk& w) const {
  if (!gutter_) {
    route::walk_handles(req, w);
    return;
  }
  w.line(handle_name());
  const std::vector<const route*> targets = targets_for(req);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (i == 0 || exptime_ == 0) {
      w.child(*targets[i], req);
      continue;
    }
    w.enter();
    w.line("modify-exptime|min|exptime=" + std::to_string(exptime_));
    w.child(*targets[i], req);
    w.leave();
  }
}

}  // namespace ithaca::route

// ---- the kinds (failover, failover_exptime): their options, shared, and
// how the config formats spell them; build.

namespace ithaca::route {

namespace {

struct failover_options final : config::route_options {
  // Which results fail over, by mcrouter's result names
  // (config::known_failover_errors): `errors` for every class; by_class[c],
  // when given, replaces it for class c. Not given: every error. Given and
  // empty (mcrouter's `"updates": []`): no failover at all for that class.
  std::vector<std::string> errors;
  std::array<std::vector<std::string>, config::kOpClasses> by_class;
  bool errors_given = false;
  std::array<bool, config::kOpClasses> class_given{};
  double limit_rate = 0;  // failover_limit: tokens per request, (0, 1]; 0: no limit
  double limit_burst = 1000;
  std::uint32_t exptime = 10;  // failover_exptime: the TTL cap of writes to a failover child
  failover_policy_config policy;
  std::vector<std::string> route_tags;  // mcrouter's route-level `tags` (RendezvousPolicy's, replacing its own)
  bool route_tags_given = false;
  bool failover_tag = false, lease_pairing = false;
  std::string pool;  // salted_failover: the pool it fails over within
};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ',';
    out += n;
  }
  return out;
}

// The names of `list` into `out`: YAML's words (did you mean) or mcrouter's
// (its mc_res_ prefix accepted).
// `empty_ok`: an empty list is allowed and means no failover (a class of a
// table; YAML refuses it for every class at once, surely a mistake there).
void read_error_names(config::route_kind_reader& in, const YAML::Node& list, const std::string& where,
                      std::vector<std::string>& out, bool empty_ok) {
  const bool yaml = in.format() == config::route_format::Yaml;
  if (!list.IsSequence()) {
    in.fail_node(list, yaml ? where + ": expected a list of error names (connect_error, timeout, tko, ...), got " +
                                  config::describe_node(list)
                            : std::string("List of failover errors is not an array."));
    return;
  }
  const std::vector<std::string>& known = config::known_failover_errors();
  for (const YAML::Node& e : list) {
    std::string name = e.IsScalar() ? e.Scalar() : "";
    if (!yaml && name.starts_with("mc_res_")) name = name.substr(7);
    if (std::find(known.begin(), known.end(), name) != known.end()) {
      out.push_back(name);
    } else if (!yaml) {
      in.fail_node(e, in.what() + ": Failover error '" + e.Scalar() + "' is not a valid error type.");
    } else {
      const std::string close = config::closest_key(name, known);
      in.fail_node(e, where + ": unknown error '" + name + "'" +
                          (close.empty() ? " (mcrouter's result names: connect_error, connect_timeout, timeout, tko, "
                                           "remote_error, busy, try_again, ...)"
                                         : " (did you mean '" + close + "'?)"));
    }
  }
  if (yaml && !empty_ok && list.size() == 0) {
    in.fail_node(list, where + ": an empty list would never fail over (give it by class to turn one class's off)");
  }
}

// `failover_errors`: a list for every class, or a table by class (YAML: get,
// set, delete, arithmetic, touch; mcrouter: gets, updates, deletes).
void read_failover_errors(config::route_kind_reader& in, const char* key, config::route_config&,
                          config::route_options& opts) {
  auto& o = static_cast<failover_options&>(opts);
  const YAML::Node& v = *in.value(key);
  const bool yaml = in.format() == config::route_format::Yaml;
  if (v.IsMap()) {
    if (yaml) {
      in.check_keys(v, key, {"get", "set", "delete", "arithmetic", "touch"});
      for (std::size_t c = 0; c < config::kOpClasses; ++c) {
        const char* cls = kinds::to_string(kinds::op_class_at(c));
        if (!v[cls]) continue;
        o.class_given[c] = true;
        read_error_names(in, v[cls], cls, o.by_class[c], true);
      }
    } else {
      in.check_keys(v, in.what() + " failover_errors", {"gets", "updates", "deletes"});
      const char* const mcrouter_classes[] = {"gets", "updates", "deletes"};
      for (std::size_t c = 0; c < 3; ++c) {
        if (!v[mcrouter_classes[c]]) continue;
        o.class_given[c] = true;
        read_error_names(in, v[mcrouter_classes[c]], key, o.by_class[c], true);
      }
    }
  } else if (yaml || v.IsSequence()) {
    o.errors_given = true;
    read_error_names(in, v, key, o.errors, !yaml);
  } else {
    in.fail_node(v, "Failover errors must be either an array or an object.");
  }
}

std::string show_failover_errors(const config::route_options& opts) {
  const auto& o = static_cast<const failover_options&>(opts);
  std::string out = o.errors_given && o.errors.empty() ? "none" : joined(o.errors);
  for (std::size_t c = 0; c < config::kOpClasses; ++c) {
    if (!o.class_given[c]) continue;
    if (!out.empty()) out += ';';
    out += kinds::to_string(kinds::op_class_at(c));
    out += ':';
    out += o.by_class[c].empty() ? "none" : joined(o.by_class[c]);
  }
  return out;
}

// `failover_limit: {rate, burst}`. YAML refuses a value out of range;
// mcrouter clamps both (a rate into [0, 1], a burst to at least 1), as
// mcrouter does, but a rate of 0 is refused.
void read_failover_limit(config::route_kind_reader& in, const char* key, config::route_config&,
                         config::route_options& opts) {
  auto& o = static_cast<failover_options&>(opts);
  const YAML::Node& v = *in.value(key);
  if (in.format() == config::route_format::Yaml) {
    if (!v.IsMap()) {
      in.fail_at(key, "failover_limit: expected {rate: R, burst: B}, got " + config::describe_node(v));
      return;
    }
    in.check_keys(v, key, {"rate", "burst"});
    if (!in.number_in(v, "rate", o.limit_rate, 0, 1, "a fraction of requests above 0, at most 1", true) && !v["rate"]) {
      in.fail_node(v, "failover_limit needs `rate:` (the share of requests that may fail over, 0 to 1)");
    }
    in.number_in(v, "burst", o.limit_burst, 1, 1e12, "a number of failovers, at least 1", false);
    return;
  }
  double rate = 0, burst = 1000;
  if (!v.IsMap() || !v["rate"] || !config::mcrouter::as_number(v["rate"], rate)) {
    in.fail_node(v, "FailoverRateLimiter: failover_limit needs a numeric `rate`");
    return;
  }
  in.check_keys(v, "failover_limit", {"rate", "burst"});
  if (v["burst"] && !config::mcrouter::as_number(v["burst"], burst)) {
    in.fail_node(v["burst"], "FailoverRateLimiter: burst is not a number");
  }
  rate = std::min(std::max(rate, 0.0), 1.0);
  if (rate == 0) {
    in.fail_node(v["rate"],
                 "failover_limit: a rate of 0 (no failover after the first burst) is not supported by "
                 "ithaca; leave failover_limit out or give a rate above 0");
  }
  o.limit_rate = rate;
  o.limit_burst = std::max(burst, 1.0);
}

std::string show_failover_limit(const config::route_options& opts) {
  const auto& o = static_cast<const failover_options&>(opts);
  return config::number_text(o.limit_rate) + "/" + config::number_text(o.limit_burst);
}

// failover_policy (failover_policy.h), in both formats.
void read_failover_policy_option(config::route_kind_reader& in, const char* key, config::route_config&,
                                 config::route_options& opts) {
  auto& o = static_cast<failover_options&>(opts);
  // mcrouter merges a route-level `hash` into it; kept if read first.
  const bool weighted = o.policy.weighted;
  std::vector<double> weights = o.policy.weights;
  read_failover_policy(in, *in.value(key), o.policy);
  if (weighted && !o.policy.weighted) {
    o.policy.weighted = true;
    o.policy.weights = std::move(weights);
  }
}

std::string show_failover_policy_option(const config::route_options& opts) {
  const auto& o = static_cast<const failover_options&>(opts);
  return show_failover_policy(o.policy);
}

// mcrouter's route-level `hash`: an object is the deterministic order's hash
// function; a name is the rendezvous policy's ("WeightedRendezvous"), which
// the other policies ignore (failover_order checks it against the policy).
void read_failover_hash(config::route_kind_reader& in, const char* key, config::route_config&,
                        config::route_options& opts) {
  const YAML::Node& v = *in.value(key);
  failover_policy_config& p = static_cast<failover_options&>(opts).policy;
  if (v.IsScalar()) {
    p.route_hash = v.Scalar();
    return;
  }
  read_failover_policy_hash(in, v, p);
}

// mcrouter's route-level `tags`: a RendezvousPolicy's tags, replacing any
// the policy has (mcrouter inserts them into the policy's object).
void read_failover_tags(config::route_kind_reader& in, const char* key, config::route_config&,
                        config::route_options& opts) {
  auto& o = static_cast<failover_options&>(opts);
  o.route_tags_given = read_rendezvous_tags(in, *in.value(key), o.route_tags);
}

// The options both kinds take; the gutter's add its exptime.
constexpr config::option_spec kFailoverOptions[] = {
    config::custom_option("failover_errors", "failover_errors",
                          "which results fail over (mcrouter's result names: timeout, connect_error, tko, ...), "
                          "for every class or by class",
                          read_failover_errors, show_failover_errors, "[timeout, connect_error]",
                          "[\"timeout\", \"connect_error\"]"),
    config::custom_option("failover_limit", "failover_limit",
                          "the share of requests that may fail over (rate, 0 to 1) and its burst", read_failover_limit,
                          show_failover_limit, "{rate: 0.5, burst: 100}", "{\"rate\": 0.5, \"burst\": 100}"),
    config::custom_option("failover_policy", "failover_policy",
                          "the order children are tried in and how many: in_order (default), deterministic_order "
                          "{max_tries, max_error_tries, exclude_errors, hash, ignore_normal_reply_index, "
                          "enable_failure_domains}, "
                          "least_failures {max_tries}, rendezvous {tags, weights}; in_order {max_tries (error "
                          "tries), exclude_errors}",
                          read_failover_policy_option, show_failover_policy_option,
                          "{type: deterministic_order, max_tries: 2, max_error_tries: 2}",
                          "{\"type\": \"DeterministicOrderPolicy\", \"max_tries\": 2, \"max_error_tries\": 2}"),
    config::custom_option(nullptr, "hash",
                          "mcrouter: the deterministic order's hash ({hash_func, weights}), or the rendezvous "
                          "policy's (\"WeightedRendezvous\": the policy's weights)",
                          read_failover_hash, config::show_nothing, nullptr, "{\"hash_func\": \"Ch3\"}"),
    config::custom_option(nullptr, "tags", "mcrouter: the rendezvous policy's tags (they replace the policy's)",
                          read_failover_tags, config::show_nothing, nullptr, "[\"host:port\"]"),
    config::flag_option<&failover_options::failover_tag>(
        "failover_tag", "failover_tag", "a hash-stopped key sent to a failover child gets \":failover=1\" appended"),
    config::flag_option<&failover_options::lease_pairing>(
        "enable_lease_pairing", "enable_lease_pairing",
        "a lease-set goes to the child that answered its lease-get (needs meta backends for leases)"),
};
constexpr auto kGutterOptions = [] {
  std::array<config::option_spec, std::size(kFailoverOptions) + 1> out{};
  std::copy(std::begin(kFailoverOptions), std::end(kFailoverOptions), out.begin());
  out.back() = config::seconds_option<&failover_options::exptime>(
      "exptime", "failover_exptime", "the TTL cap of writes sent to a failover child (10s in YAML, 60 in mcrouter)");
  return out;
}();

constexpr auto kSaltedOptions = [] {
  std::array<config::option_spec, std::size(kFailoverOptions) + 1> out{};
  std::copy(std::begin(kFailoverOptions), std::end(kFailoverOptions), out.begin());
  out.back() = config::pool_option<&failover_options::pool>(
      "pool", "pool", "the pool: its own route first, then (mcrouter) each of its servers as the failover children");
  return out;
}();

constexpr config::child_slot kFailoverSlots[] = {
    {"", "children", "children", true, 2},
};
constexpr config::child_slot kGutterSlots[] = {
    {"normal", "normal", "normal", false, 1, "FailoverWithExptimeRoute: normal not found"},
    {"failover", "failover", "failover", true, 1, nullptr, true},
};

// In YAML the failover children are listed; mcrouter makes them from the
// pool: the normal route is `{"type": "PoolRoute", "pool", "hash"}`, then
// "Pool|POOL", each server alone (McRouteHandleProvider's SaltedFailoverRoute).
constexpr config::child_slot kSaltedSlots[] = {
    {"failover", "failover", nullptr, true, 1},
};

void finish_salted(config::route_kind_reader& in, config::route_config& r) {
  const auto& o = config::options_of<failover_options>(r);
  if (o.pool.empty()) return;  // refused already
  std::vector<config::route_config> children;
  if (in.format() == config::route_format::Yaml) {
    children.push_back(config::module_node("pool", config::route_format::Yaml, r.line, {{"pool", o.pool}}));
    for (config::route_config& c : r.children) children.push_back(std::move(c));
  } else {
    YAML::Node normal(YAML::NodeType::Map);
    normal["type"] = "PoolRoute";
    normal["pool"] = o.pool;
    if (const YAML::Node* h = in.value("hash")) normal["hash"] = *h;
    YAML::Node list(YAML::NodeType::Sequence);
    list.push_back(normal);
    list.push_back("Pool|" + o.pool);
    children = in.routes_at(list, "");
  }
  for (config::route_config& c : children) {
    c.role.clear();
    if (c.line <= 0) c.line = r.line;
  }
  r.children = std::move(children);
}

// What the policy needs of the route's other options, once all are read
// (mcrouter merges the route's `hash` and `tags` into the policy), refused
// at the policy's line with mcrouter's words; and mcrouter pairs lease
// tokens by the route's name: lease pairing without a name is refused.
void finish_failover(config::route_kind_reader& in, config::route_config& r) {
  const auto& o = config::options_of<failover_options>(r);
  const failover_policy_config& p = o.policy;
  const bool mcrouter = in.format() == config::route_format::Mcrouter;
  if (mcrouter && o.lease_pairing && !in.has("name")) {
    in.fail("Failover: name is required when lease pairing is enabled");
  }
  if (!in.has("failover_policy")) return;
  if (p.kind == failover_policy_kind::Rendezvous) {
    const std::size_t tags = o.route_tags_given ? o.route_tags.size() : p.tags.size();
    if (!p.tags_given && !o.route_tags_given) {
      in.fail_at("failover_policy", "FailoverRendezvousPolicy: tags needed for Rendezvous hash route");
    } else if (p.route_hash == "WeightedRendezvous" && !p.rendezvous_weights_given) {
      in.fail_at("failover_policy", "WeightedRendezvousHashFunc: no weights");
    } else if (p.route_hash == "WeightedRendezvous" && p.rendezvous_weights.size() != tags) {
      in.fail_at("failover_policy", "WeightedRendezvousHash: number of weights doesn't match number of end points.");
    }
  }
  if (p.kind == failover_policy_kind::DeterministicOrder && !p.route_hash.empty()) {
    in.fail_at("hash", "Failover: DeterministicOrderPolicy: the route's hash '" + p.route_hash +
                           "' is not an object ({\"hash_func\": \"Ch3\"|\"WeightedCh3\", \"weights\"})");
  }
}

// mcrouter: a gutter with no failover child is its normal route alone.
void finish_gutter(config::route_kind_reader& in, config::route_config& r) {
  if (in.format() == config::route_format::Mcrouter && r.children.size() == 1) {
    config::become_only_child(r);
  }
}

failover_route::options runtime_options(tree_builder& b, const config::route_config& r, bool& ok) {
  const auto& o = config::options_of<failover_options>(r);
  failover_route::options out;
  std::string bad;
  // An empty list given means no failover (mcrouter's), a missing one every error.
  failover_mask all = 0;
  ok = (o.errors_given && o.errors.empty()) || parse_failover_errors(o.errors, all, &bad);
  out.errors.fill(all);
  for (std::size_t c = 0; ok && c < config::kOpClasses; ++c) {
    if (!o.class_given[c]) continue;
    out.errors[c] = 0;
    if (!o.by_class[c].empty()) ok = parse_failover_errors(o.by_class[c], out.errors[c], &bad);
  }
  if (!ok) b.fail(r, "unknown failover error '" + bad + "'");
  out.limit_rate = o.limit_rate;
  out.limit_burst = o.limit_burst > 0 ? o.limit_burst : 1000;
  out.exptime = o.exptime == 0 ? 10 : o.exptime;
  out.policy = o.policy;
  if (o.route_tags_given) {
    out.policy.tags = o.route_tags;
    out.policy.tags_given = true;
  }
  out.failover_tag = o.failover_tag;
  out.lease_pairing = o.lease_pairing;
  return out;
}

const route* add_failover(tree_builder& b, const config::route_config& r, std::vector<const route*> children,
                          const failover_route::options& o) {
  auto made = std::make_unique<failover_route>(b.name_of(r), std::move(children), o);
  if (std::string why; !made->ok(&why)) return b.fail(r, why);
  return b.keep(std::move(made));
}

const route* build_failover(tree_builder& b, const config::route_config& r) {
  bool ok = false;
  failover_route::options o = runtime_options(b, r, ok);
  std::vector<const route*> children;
  if (!ok || !b.children(r, "", true, 1, children)) return nullptr;
  return add_failover(b, r, std::move(children), o);
}

const route* build_gutter(tree_builder& b, const config::route_config& r) {
  bool ok = false;
  failover_route::options o = runtime_options(b, r, ok);
  if (!ok) return nullptr;
  o.gutter = true;
  const route* normal = b.child(r, "normal", true);
  if (normal == nullptr) return nullptr;
  std::vector<const route*> children{normal};
  if (r.with_role("failover").empty()) return b.fail(r, "needs at least one `failover` route");
  if (!b.children(r, "failover", true, 0, children)) return nullptr;
  return add_failover(b, r, std::move(children), o);
}

constexpr config::route_kind_info kFailoverInfo{
    "failover",
    "FailoverRoute",
    "the children in order until a reply that is not an error",
    kFailoverSlots,
    kFailoverOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> { return std::make_shared<failover_options>(); },
    config::route_kind_info::collapse::NullOrSingleton,
    finish_failover,
};

constexpr config::route_kind_info kGutterInfo{
    "failover_exptime",
    "FailoverWithExptimeRoute",
    "the gutter: the normal child, then failover children whose writes get a TTL cap",
    kGutterSlots,
    kGutterOptions,
    [](config::route_format f) -> std::shared_ptr<config::route_options> {
      auto o = std::make_shared<failover_options>();
      o->exptime = f == config::route_format::Yaml ? 10 : 60;  // the paper's gutter; mcrouter's default
      return o;
    },
    config::route_kind_info::collapse::None,
    finish_gutter,
};

constexpr config::route_kind_info kSaltedInfo{
    "salted_failover",
    "SaltedFailoverRoute",
    "a pool, then its servers in the deterministic order of a failover_policy",
    kSaltedSlots,
    kSaltedOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> { return std::make_shared<failover_options>(); },
    config::route_kind_info::collapse::None,
    finish_salted,
};

}  // namespace

extern constinit const kind_module kFailoverKind{kFailoverInfo, build_failover};
extern constinit const kind_module kSaltedFailoverKind{kSaltedInfo, build_failover};
extern constinit const kind_module kFailoverExptimeKind{kGutterInfo, build_gutter};

}  // namespace ithaca::route
