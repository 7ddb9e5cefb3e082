#include "failover_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "hash/hash_functions.h"
#include "hash_kind.h"
#include "key_hash_part.h"
#include "mcrouter_json.h"
#include "pool.h"
#include "route_kind_reader.h"
#include "router_config.h"
#include "yaml_section.h"

namespace ithaca::route {

namespace {

// mcrouter's route-level hash naming the weighted rendezvous.
constexpr std::string_view kWeightedRendezvous = "WeightedRendezvous";

// mcrouter's draws per step before it settles for a used child.
constexpr std::uint32_t kFailoverPolicyDraws = 100;

struct failover_policy_name {
  const char* yaml;
  const char* mcrouter;
  failover_policy_kind kind;
};
constexpr failover_policy_name kFailoverPolicyNames[] = {
    {"in_order", "InOrderPolicy", failover_policy_kind::InOrder},
    {"deterministic_order", "DeterministicOrderPolicy", failover_policy_kind::DeterministicOrder},
    {"least_failures", "LeastFailuresPolicy", failover_policy_kind::LeastFailures},
    {"rendezvous", "RendezvousPolicy", failover_policy_kind::Rendezvous},
};

// mcrouter's rendezvous hash (RendezvousHashHelper.h): the seeds of a tag's
// and a key's MurmurHash64A, and the mix of the two that scores them.
constexpr std::uint64_t kRendezvousTagSeed = 4193360111ull;
constexpr std::uint64_t kRendezvousKeySeed = 2718281828ull;
std::uint64_t rendezvous_mix(std::uint64_t upper, std::uint64_t lower) {
  constexpr std::uint64_t kMul = 0x9ddfea08eb382d69ull;
  std::uint64_t a = (lower ^ upper) * kMul;
  a ^= a >> 47;
  std::uint64_t b = (upper ^ a) * kMul;
  b ^= b >> 47;
  return b * kMul;
}

// A whole number >= 1 at `v[key]`; false (and an error) otherwise.
bool failover_policy_count(config::route_kind_reader& in, const YAML::Node& v, const char* key, std::uint32_t& out) {
  std::int64_t n = 0;
  if (!config::mcrouter::as_int(v[key], n) || n < 1 || n > std::numeric_limits<std::uint32_t>::max()) {
    in.fail_node(v[key], "failover_policy: " + std::string(key) + " must be a whole number of at least 1");
    return false;
  }
  out = static_cast<std::uint32_t>(n);
  return true;
}

// exclude_errors: mcrouter's error result names (mc_res_ prefix taken).
void failover_policy_excluded(config::route_kind_reader& in, const YAML::Node& e, failover_policy_config& out) {
  const std::vector<std::string>& known = config::known_failover_errors();
  if (!e.IsSequence()) in.fail_node(e, "List of carbon errors is not an array");
  for (const YAML::Node& n : e) {
    std::string name = n.IsScalar() ? n.Scalar() : "";
    if (name.starts_with("mc_res_")) name = name.substr(7);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      in.fail_node(n, "Failover error " + name + " is not a valid error result");
      return;
    }
    out.exclude_errors.push_back(name);
  }
}

}  // namespace

bool read_rendezvous_tags(config::route_kind_reader& in, const YAML::Node& v, std::vector<std::string>& out) {
  if (!v.IsSequence()) {
    in.fail_node(v, "FailoverRendezvousPolicy: tags is not an array");
    return false;
  }
  for (const YAML::Node& t : v) {
    if (!t.IsScalar()) {
      in.fail_node(t, "FailoverRendezvousPolicy: tag is not a string");
      return false;
    }
    out.push_back(t.Scalar());
  }
  return true;
}

void read_failover_policy_hash(config::route_kind_reader& in, const YAML::Node& h, failover_policy_config& out) {
  if (!h.IsMap()) {
    in.fail_node(h, "failover_policy: hash must be an object ({\"hash_func\": \"Ch3\"|\"WeightedCh3\", \"weights\"})");
    return;
  }
  in.check_keys(h, "failover_policy hash", {"hash_func", "weights", "salt"});
  const std::string func = h["hash_func"] && h["hash_func"].IsScalar() ? h["hash_func"].Scalar() : "Ch3";
  if (func != "Ch3" && func != "WeightedCh3") {
    in.fail_node(h["hash_func"], "Unknown hash function " + func + " (DeterministicOrderPolicy: Ch3 or WeightedCh3)");
    return;
  }
  out.weighted = func == "WeightedCh3";
  out.weights.clear();
  if (!out.weighted) return;
  const YAML::Node w = h["weights"];
  if (!w || !w.IsSequence()) {
    in.fail_node(h, "WeightedChHashFunc: not an object or no weights");
    return;
  }
  for (const YAML::Node& e : w) {
    double d = 0;
    if (!config::mcrouter::as_number(e, d) || d < 0 || d > 1) {
      in.fail_node(e, "WeightedChHashFunc: weight must be in range [0, 1.0]");
      return;
    }
    out.weights.push_back(d);
  }
}

void read_failover_policy(config::route_kind_reader& in, const YAML::Node& v, failover_policy_config& out) {
  const bool yaml = in.format() == config::route_format::Yaml;
  if (!v.IsMap()) {
    in.fail_node(v, "Failover: failover_policy is not object");
    return;
  }
  if (!v["type"] || !v["type"].IsScalar()) {
    in.fail_node(v, "Failover: failover_policy object is missing 'type' field");
    return;
  }
  const std::string type = v["type"].Scalar();
  const failover_policy_name* found = nullptr;
  std::string names;
  for (const failover_policy_name& n : kFailoverPolicyNames) {
    if (type == (yaml ? n.yaml : n.mcrouter)) found = &n;
    names += std::string(names.empty() ? "" : ", ") + (yaml ? n.yaml : n.mcrouter);
  }
  if (found == nullptr) {
    in.fail_node(v["type"], "failover_policy: type '" + type + "' is not supported by ithaca (" + names + ")");
    return;
  }
  out.kind = found->kind;
  switch (out.kind) {
    case failover_policy_kind::InOrder:
      // mcrouter's max_tries here bounds the error tries, every child stays
      // in the order (its iterator ends at the last child).
      in.check_keys(v, "failover_policy", {"type", "max_tries", "exclude_errors"});
      if (v["max_tries"] && !failover_policy_count(in, v, "max_tries", out.max_error_tries)) return;
      if (const YAML::Node e = v["exclude_errors"]) failover_policy_excluded(in, e, out);
      return;
    case failover_policy_kind::LeastFailures:
      in.check_keys(v, "failover_policy", {"type", "max_tries"});
      if (!v["max_tries"]) {
        in.fail_node(v, "Failover: LeastFailuresPolicy must specify 'max_tries' field");
        return;
      }
      failover_policy_count(in, v, "max_tries", out.max_tries);
      return;
    case failover_policy_kind::Rendezvous: {
      in.check_keys(v, "failover_policy", {"type", "tags", "hash", "weights"});
      // mcrouter reads no `hash` here (the route's own picks the weighted
      // kind): another name than its default is surely a misplaced one.
      if (const YAML::Node h = v["hash"]; h && !(h.IsScalar() && h.Scalar() == "Rendezvous")) {
        in.fail_node(h, "failover_policy: RendezvousPolicy's hash " + config::describe_node(h) +
                            " is not supported by ithaca (Rendezvous; WeightedRendezvous is the FailoverRoute's own "
                            "`hash`)");
      }
      if (const YAML::Node w = v["weights"]) {
        // Read whatever the route's hash is (it may come after): used by
        // WeightedRendezvous only, as mcrouter's.
        if (!w.IsSequence()) {
          in.fail_node(w, "WeightedRendezvousHashFunc: weights is not an array");
          return;
        }
        for (const YAML::Node& e : w) {
          double d = 0;
          if (!config::mcrouter::as_number(e, d) || d < 0) {
            in.fail_node(e, "WeightedRendezvousHashFunc: a weight must be a number of at least 0");
            return;
          }
          out.rendezvous_weights.push_back(d);
        }
        out.rendezvous_weights_given = true;
      }
      // Without them, the route's own `tags` may give them (finish_failover checks).
      if (const YAML::Node tags = v["tags"]) out.tags_given = read_rendezvous_tags(in, tags, out.tags);
      return;
    }
    case failover_policy_kind::DeterministicOrder: break;
  }
  in.check_keys(v, "failover_policy",
                {"type", "max_tries", "max_error_tries", "exclude_errors", "hash", "enable_failure_domains",
                 "ignore_normal_reply_index"});
  for (const char* key : {"max_tries", "max_error_tries"}) {
    if (!v[key]) {
      in.fail_node(v, std::string("Failover: DeterministicOrderPolicy must specify '") + key + "' field");
      return;
    }
  }
  if (!failover_policy_count(in, v, "max_tries", out.max_tries)) return;
  if (!failover_policy_count(in, v, "max_error_tries", out.max_error_tries)) return;
  out.max_error_tries = std::min(out.max_error_tries, out.max_tries);  // as mcrouter, which logs it
  if (const YAML::Node e = v["exclude_errors"]) failover_policy_excluded(in, e, out);
  for (const char* key : {"enable_failure_domains", "ignore_normal_reply_index"}) {
    bool on = false;
    if (v[key] && !config::mcrouter::as_bool(v[key], on)) {
      in.fail_node(v[key], std::string("failover_policy: ") + key + " is not a boolean");
      return;
    }
    (std::string_view(key) == "ignore_normal_reply_index" ? out.ignore_normal_reply_index
                                                          : out.enable_failure_domains) = on;
  }
  if (const YAML::Node h = v["hash"]) read_failover_policy_hash(in, h, out);
}

std::string show_failover_policy(const failover_policy_config& c) {
  for (const failover_policy_name& n : kFailoverPolicyNames) {
    if (n.kind != c.kind) continue;
    std::string out = n.yaml;
    if (c.kind == failover_policy_kind::InOrder) {
      return c.max_error_tries == 0 ? out : out + "/" + std::to_string(c.max_error_tries);
    }
    if (c.kind == failover_policy_kind::Rendezvous) {
      return out + "/" + std::to_string(c.tags.size()) + "tags" +
             (c.route_hash == kWeightedRendezvous ? "/weighted" : "");
    }
    out += '/';
    out += std::to_string(c.max_tries);
    if (c.kind == failover_policy_kind::DeterministicOrder) {
      out += '/';
      out += std::to_string(c.max_error_tries);
      if (c.weighted) out += "/weighted";
      if (c.enable_failure_domains) out += "/failure_domains";
    }
    return out;
  }
  return "";
}

failover_order::failover_order(const failover_policy_config& c, std::vector<const proxy::pool*> pools)
    : kind_(c.kind),
      children_(pools.size()),
      max_tries_(c.max_tries == 0 ? static_cast<std::uint32_t>(pools.size())
                                  : std::min<std::uint32_t>(c.max_tries, static_cast<std::uint32_t>(pools.size()))),
      max_error_tries_(c.max_error_tries == 0 ? max_tries_ : std::min(c.max_error_tries, max_tries_)),
      ignore_normal_(c.ignore_normal_reply_index),
      failure_domains_(c.enable_failure_domains),
      pools_(std::move(pools)) {
  const std::size_t children = children_;
  if (!c.exclude_errors.empty() && !parse_failover_errors(c.exclude_errors, exclude_, &bad_error_)) {
    bad_error_ = "unknown failover error '" + bad_error_ + "' in exclude_errors";
  }
  if (kind_ == failover_policy_kind::DeterministicOrder) {
    std::vector<proxy::server_spec> specs;
    for (std::size_t i = 0; i < children; ++i) {
      proxy::server_spec s{"child:" + std::to_string(i), 1};
      if (c.weighted) s.fraction = i < c.weights.size() ? c.weights[i] : 0.5;  // mcrouter's default
      specs.push_back(std::move(s));
    }
    hash_ = proxy::make_distribution(c.weighted ? kinds::distribution_kind::WeightedCh3 : kinds::distribution_kind::Ch3,
                                     specs, kinds::hash_kind::Md5, &bad_error_);
  }
  if (kind_ == failover_policy_kind::DeterministicOrder && !c.route_hash.empty()) {
    bad_error_ = "Failover: DeterministicOrderPolicy: the route's hash '" + c.route_hash +
                 "' is not an object ({\"hash_func\": \"Ch3\"|\"WeightedCh3\", \"weights\"})";
  }
  if (kind_ == failover_policy_kind::Rendezvous) {
    // The first child is the pool route, whose own server is skipped.
    if (c.route_hash == kWeightedRendezvous) {
      if (!c.rendezvous_weights_given) {
        bad_error_ = "WeightedRendezvousHashFunc: no weights";
      } else if (c.rendezvous_weights.size() != c.tags.size()) {
        bad_error_ = "WeightedRendezvousHash: number of weights doesn't match number of end points.";
      }
      tag_weights_ = c.rendezvous_weights;
    }
    if (!c.tags_given) {
      bad_error_ = "FailoverRendezvousPolicy: tags needed for Rendezvous hash route";
    } else if (c.tags.size() + 1 != children) {
      bad_error_ = "FailoverRendezvousPolicy: number of tags " + std::to_string(c.tags.size()) +
                   " doesn't match number of route handles " + std::to_string(children - 1);
    }
    for (const std::string& t : c.tags) tag_hashes_.push_back(proxy::murmur64a(t, kRendezvousTagSeed));
    max_tries_ = static_cast<std::uint32_t>(children > 1 ? children - 1 : children);
    max_error_tries_ = max_tries_;
  }
  if (kind_ == failover_policy_kind::LeastFailures) {
    errors_in_a_row_ = std::make_unique<std::atomic<std::uint32_t>[]>(children);
  }
}

bool failover_order::ok(std::string* why) const {
  if (bad_error_.empty()) return true;
  if (why) *why = bad_error_;
  return false;
}

bool failover_order::error_try(const protocol::routed_result& r) const {
  constexpr failover_mask kTko = 1;  // route_util.cc: bit 0, a server marked down
  if (fails_over(r, kTko) && r.outcome == protocol::routed_outcome::Failed) return false;
  return exclude_ == 0 || !fails_over(r, exclude_);
}

void failover_order::note_reply(std::size_t i, bool failed) const {
  if (!errors_in_a_row_ || i >= children_) return;
  if (failed) {
    errors_in_a_row_[i].fetch_add(1, std::memory_order_relaxed);
  } else {
    errors_in_a_row_[i].store(0, std::memory_order_relaxed);
  }
}

// mcrouter's iterator replayed from the start (a failover is rare, and its
// steps are few: max_tries): the same key (and the same servers marked
// down) always gives the same order. Per step, draws go on while they hit a
// child tried already, or (failure domains) a child in a domain a server
// marked down earlier in the request is in, at most 100 draws, the domains
// ignored past 75; `counted` gets mcrouter's count of them.
std::size_t failover_order::deterministic_at(std::uint32_t position, std::string_view key, tko_positions tko,
                                             failover_draws* counted) const {
  constexpr std::uint32_t kDomainDraws = kFailoverPolicyDraws * 3 / 4;
  const std::string_view routing = proxy::key_hash_part(key, proxy::key_hash_options{"", true});
  std::vector<bool> used(children_, false);
  used[0] = true;
  const proxy::pool* normal_pool = pools_.empty() ? nullptr : pools_[0];
  if (!ignore_normal_) {
    // mcrouter's selected index of the normal route, -1 when it selects
    // nothing (so index 0, already used).
    const std::size_t normal = normal_pool != nullptr ? normal_pool->locate(key) + 1 : 0;
    if (normal < children_) used[normal] = true;
  }
  // The failure domains of the servers marked down so far (a handful).
  std::vector<std::uint32_t> failed;
  auto note_failed = [&](std::uint32_t at, std::size_t child) {
    if (!failure_domains_ || at >= kTkoPositions || ((tko >> at) & 1u) == 0) return;
    const std::uint32_t d = domain_of(child, key);
    if (d != 0 && std::find(failed.begin(), failed.end(), d) == failed.end()) failed.push_back(d);
  };
  note_failed(0, 0);
  std::uint32_t salt = 1;
  std::size_t index = 0;
  std::string salted;
  failover_draws n;
  for (std::uint32_t p = 1; p <= position; ++p) {
    std::uint32_t draws = 0;
    bool in_failed = false;
    do {
      ++salt;
      salted.assign(routing);
      salted += std::to_string(salt);
      index = hash_->pick(salted, 0);
      in_failed = !failed.empty() && draws <= kDomainDraws &&
                  std::find(failed.begin(), failed.end(), domain_of(index, key)) != failed.end();
      ++(in_failed ? n.failed_domain_collisions : n.collisions);
    } while ((used[index] || in_failed) && draws++ < kFailoverPolicyDraws);
    --n.collisions;  // the draw kept
    used[index] = true;
    note_failed(p, index);
  }
  if (counted != nullptr) *counted = n;
  return index;
}

std::size_t failover_order::least_failures_next(std::uint64_t tried, std::uint32_t position,
                                                std::string_view key) const {
  if (children_ - 1 > kLeastFailuresTracked) return child_at(position, key);
  std::size_t best = children_;
  std::uint32_t fewest = 0;
  for (std::size_t i = 1; i < children_; ++i) {
    if ((tried >> (i - 1)) & 1) continue;
    const std::uint32_t n = errors_in_a_row_[i].load(std::memory_order_relaxed);
    if (best == children_ || n < fewest) {
      best = i;
      fewest = n;
    }
  }
  return best < children_ ? best : child_at(position, key);
}

// mcrouter's rendezvous iterator: the tags by score, highest first (a score
// is the mix as a double, so close ones tie; a tie goes to the higher
// index), without the normal route's own server (its selected index, 0 when
// it selects none). Replayed for each step, as deterministic_at.
std::size_t failover_order::rendezvous_at(std::uint32_t position, std::string_view key) const {
  const std::string_view routing = proxy::key_hash_part(key, proxy::key_hash_options{"", true});
  const std::uint64_t key_hash = proxy::murmur64a(routing, kRendezvousKeySeed);
  std::vector<std::pair<double, std::size_t>> scored;
  for (std::size_t i = 0; i < tag_hashes_.size(); ++i) {
    const std::uint64_t mixed = rendezvous_mix(tag_hashes_[i], key_hash);
    if (tag_weights_.empty()) {
      scored.emplace_back(static_cast<double>(mixed), i);
      continue;
    }
    // mcrouter's weighted score: the low 53 bits as a fraction u in [0, 1),
    // weight / -ln(u) (u = 0 scores 0, as its 1 / inf).
    constexpr std::uint64_t kLow53 = (std::uint64_t{1} << 53) - 1;
    const double u = static_cast<double>(mixed & kLow53) / static_cast<double>(std::uint64_t{1} << 53);
    scored.emplace_back(tag_weights_[i] * (1.0 / -std::log(u)), i);
  }
  std::sort(scored.begin(), scored.end(), std::greater<>());
  const proxy::pool* normal_pool = pools_.empty() ? nullptr : pools_[0];
  const std::size_t primary = normal_pool != nullptr ? normal_pool->locate(key) : 0;
  std::uint32_t p = 0;
  for (const auto& [score, i] : scored) {
    if (i == primary) continue;
    if (++p == position) return i + 1;
  }
  return children_ - 1;  // not reached: position < max_tries()
}

std::uint32_t failover_order::domain_of(std::size_t i, std::string_view key) const {
  const proxy::pool* p = i < pools_.size() ? pools_[i] : nullptr;
  return p != nullptr ? p->failure_domain(p->locate(key)) : 0;
}

failover_draws failover_order::draws(std::uint32_t position, std::string_view key, tko_positions tko) const {
  failover_draws n;
  if (kind_ == failover_policy_kind::DeterministicOrder && position > 0) deterministic_at(position, key, tko, &n);
  return n;
}

std::size_t failover_order::child_at(std::uint32_t position, std::string_view key, tko_positions tko) const {
  switch (kind_) {
    case failover_policy_kind::InOrder: return position;
    case failover_policy_kind::DeterministicOrder:
      return position == 0 ? 0 : deterministic_at(position, key, tko, nullptr);
    case failover_policy_kind::Rendezvous: return position == 0 ? 0 : rendezvous_at(position, key);
    case failover_policy_kind::LeastFailures: {
      if (position == 0) return 0;
      std::vector<std::size_t> order(children_ - 1);
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i + 1;
      std::stable_sort(order.begin(), order.end(), [this](std::size_t a, std::size_t b) {
        return errors_in_a_row_[a].load(std::memory_order_relaxed) <
               errors_in_a_row_[b].load(std::memory_order_relaxed);
      });
      return order[std::min<std::size_t>(position - 1, order.size() - 1)];
    }
  }
  return position;
}

}  // namespace ithaca::route
