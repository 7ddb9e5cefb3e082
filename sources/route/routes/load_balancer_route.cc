// The `load_balancer` route (mcrouter's LoadBalancerRoute, and a PoolRoute
// whose hash_func is "LoadBalancer"): a child by the servers' load.
//
// mcrouter weighs its children by the load its servers report in their
// replies (carbon's server load), which memcached never sends: with
// memcached backends every load stays 0 and mcrouter's algorithms become
//   weighted-hashing     WeightedCh3 of the routing key (up to "|#|", the
//                        salt appended) over the children, every weight 1;
//                        with failover_count N, an error reply moves on:
//                        the child is taken out of the list (swapped with
//                        the last) and the key hashed again over the rest
//                        with the salt and the tries left appended, at
//                        most N children in all (mcrouter's order, exactly)
//   two-random-choices   two children at random, the less loaded one; here
//                        the load is ithaca's own count of calls in flight
//                        to the child's servers (a pool route's
//                        server_counters::inflight, every worker), so the
//                        choice does follow load; ties go to the second.
// A multi-key get under weighted hashing goes key by key through the route.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>
#include <string>

#include "backend_server.h"
#include "command_class.h"
#include "distribution/distribution.h"
#include "hash_kind.h"
#include "key_hash_part.h"
#include "pool_route.h"
#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"

namespace ithaca::route {

namespace {

constexpr std::int64_t kLoadBalancerSplit = -1;  // frame.saved of a multi-key get split per key

class load_balancer_route final : public route {
 public:
  enum class algorithm : std::uint8_t { WeightedHashing, TwoRandomChoices };
  load_balancer_route(std::string name, std::vector<const route*> children, std::string salt,
                      std::uint32_t failover_count, algorithm a);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  bool wants_resume(const request_slot& slot, const slot_frame& f) const override;
  const char* kind() const override { return "load_balancer"; }
  std::vector<const route*> children() const override { return children_; }
  std::vector<const route*> targets_for(const protocol::request& req) const override;
  bool tries_in_turn(const protocol::request&) const override { return failover_count_ > 1; }

 private:
  // The child asked at try `t` (0: the first) for `key`, weighted hashing.
  std::size_t hashed_at(std::uint32_t t, std::string_view key) const;
  // Calls in flight to child i's servers (0 for a child that is not a pool).
  std::int64_t load_of(std::size_t i) const;
  std::size_t two_random_choices() const;
  std::vector<const route*> children_;
  std::string salt_;
  std::uint32_t failover_count_;  // children tried at most, in [1, children]
  algorithm algorithm_;
  // WeightedCh3 with every weight 1 over m children, m = n, n-1, ...: dists_[n - m].
  std::vector<std::unique_ptr<proxy::distribution>> dists_;
  std::vector<const proxy::pool*> pools_;  // by child, null when not a pool route
};

load_balancer_route::load_balancer_route(std::string name, std::vector<const route*> children, std::string salt,
                                         std::uint32_t failover_count, algorithm a)
    : route(std::move(name)),
      children_(std::move(children)),
      salt_(std::move(salt)),
      failover_count_(std::max<std::uint32_t>(
          1, std::min<std::uint32_t>(failover_count, static_cast<std::uint32_t>(children_.size())))),
      algorithm_(a) {
  for (std::size_t m = children_.size(); m + failover_count_ > children_.size() && m > 0; --m) {
    std::vector<proxy::server_spec> specs;
    for (std::size_t i = 0; i < m; ++i) {
      proxy::server_spec s{"child:" + std::to_string(i), 1};
      s.fraction = 1.0;
      specs.push_back(std::move(s));
    }
    std::string why;
    dists_.push_back(
        proxy::make_distribution(kinds::distribution_kind::WeightedCh3, specs, kinds::hash_kind::Md5, &why));
  }
  for (const route* c : children_) {
    const auto* p = dynamic_cast<const pool_route*>(c);
    pools_.push_back(p != nullptr ? &p->pool() : nullptr);
  }
}

std::size_t load_balancer_route::hashed_at(std::uint32_t t, std::string_view key) const {
  const std::string_view routing = proxy::key_hash_part(key, proxy::key_hash_options{"", true});
  std::vector<std::size_t> index_map(children_.size());
  for (std::size_t i = 0; i < index_map.size(); ++i) index_map[i] = i;
  std::string salted(routing);
  salted += salt_;
  std::size_t idx = dists_[0]->pick(salted, 0);
  for (std::uint32_t step = 1; step <= t; ++step) {
    std::swap(index_map[idx], index_map.back());
    index_map.pop_back();
    salted.assign(routing);
    salted += salt_;
    salted += std::to_string(failover_count_ - step);  // mcrouter's retries left
    idx = dists_[step]->pick(salted, 0);
  }
  return index_map[idx];
}

std::int64_t load_balancer_route::load_of(std::size_t i) const {
  if (pools_[i] == nullptr) return 0;
  std::int64_t sum = 0;
  for (const auto& s : pools_[i]->servers()) {
    for (const auto& c : s->all_counters()) sum += c->inflight.load(std::memory_order_relaxed);
  }
  return sum;
}

std::size_t load_balancer_route::two_random_choices() const {
  thread_local std::minstd_rand rng{std::random_device{}()};
  std::size_t x = 0, y = 1;
  if (children_.size() > 2) {
    x = rng() % children_.size();
    y = rng() % (children_.size() - 1);
    if (x == y) y = children_.size() - 1;
  }
  return load_of(x) < load_of(y) ? x : y;
}

std::vector<const route*> load_balancer_route::targets_for(const protocol::request& req) const {
  if (algorithm_ == algorithm::TwoRandomChoices) return children_;
  std::vector<const route*> out;
  for (std::uint32_t t = 0; t < failover_count_; ++t) out.push_back(children_[hashed_at(t, req.key())]);
  return out;
}

dispatch_status load_balancer_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  if (algorithm_ == algorithm::TwoRandomChoices) return children_[two_random_choices()]->dispatch(slot, env);
  if (protocol::is_multikey_retrieval(slot.req) && slot.req.keys.size() > 1) {
    slot.push_frame(slot_frame{this, 0, 0, kLoadBalancerSplit});
    dispatch_each_key(*this, slot, env);
    return dispatch_status::Pending;
  }
  const std::size_t first = hashed_at(0, slot.req.key());
  if (failover_count_ <= 1) return children_[first]->dispatch(slot, env);
  slot.push_frame(slot_frame{this, 0, 0, static_cast<std::int64_t>(first)});
  dispatch_child(*children_[first], slot, env);
  return dispatch_status::Pending;
}

// frame.state: the try whose reply arrived; an error moves on (mcrouter's
// shouldFailover: any error reply).
bool load_balancer_route::wants_resume(const request_slot& slot, const slot_frame& f) const {
  if (f.saved == kLoadBalancerSplit) return true;
  return f.state + 1 < failover_count_ && fails_over(slot.result, kFailoverAll);
}

dispatch_status load_balancer_route::resume(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  if (f.saved == kLoadBalancerSplit) {
    for (std::size_t i = 0; i < slot.children_in_use(); ++i) {
      request_slot& c = slot.child_at(i);
      merge_hits(slot.result, c.result, c.key_map);
    }
    return dispatch_status::Done;
  }
  if (!wants_resume(slot, f)) return dispatch_status::Done;
  route_counters::add(counters().failovers);
  f.state += 1;
  const std::size_t next = hashed_at(f.state, slot.req.key());
  f.saved = static_cast<std::int64_t>(next);
  slot.release_reply();
  dispatch_child(*children_[next], slot, env);
  return dispatch_status::Pending;
}

// ---- the kind: options, how the config formats spell them, build.

struct load_balancer_options final : config::route_options {
  std::string salt;
  int algorithm = 0;  // index into kLoadBalancerAlgorithms
  std::uint32_t failover_count = 1;
  bool thrift_server_load = false;
};

constexpr const char* kLoadBalancerAlgorithms[] = {"weighted-hashing", "two-random-choices"};

// A whole number in [lo, hi] at the option's value, read into `out`.
bool load_balancer_count(config::route_kind_reader& in, const char* key, long long lo, long long hi, long long& out) {
  const YAML::Node& v = *in.value(key);
  long long n = lo - 1;
  try {
    n = v.IsScalar() ? v.as<long long>() : lo - 1;
  } catch (const YAML::Exception&) {
    n = lo - 1;
  }
  if (n < lo || n > hi) {
    in.fail_node(v, "LoadBalancerRoute: " + std::string(key) + " is not an integer from " + std::to_string(lo) +
                        " to " + std::to_string(hi));
    return false;
  }
  out = n;
  return true;
}

void read_failover_count(config::route_kind_reader& in, const char* key, config::route_config&,
                         config::route_options& opts) {
  long long n = 1;
  if (load_balancer_count(in, key, 1, 1000000, n)) {
    static_cast<load_balancer_options&>(opts).failover_count = static_cast<std::uint32_t>(n);
  }
}
std::string show_failover_count(const config::route_options& opts) {
  return std::to_string(static_cast<const load_balancer_options&>(opts).failover_count);
}

// load_ttl_ms: how long mcrouter trusts a reported load. ithaca reads its
// in-flight counts live, so there is nothing to expire: checked, then unused.
void read_load_ttl(config::route_kind_reader& in, const char* key, config::route_config&, config::route_options&) {
  long long n = 0;
  load_balancer_count(in, key, 0, 1000LL * 3600 * 24, n);
}

constexpr config::child_slot kLoadBalancerSlots[] = {
    {"", "children", "children", true, 2},
};
constexpr config::option_spec kLoadBalancerOptions[] = {
    config::choice_option<&load_balancer_options::algorithm>(
        "algorithm", "algorithm", kLoadBalancerAlgorithms,
        "weighted-hashing (by key, the default) or two-random-choices (the less loaded of two)"),
    config::text_option<&load_balancer_options::salt>("salt", "salt", "appended to the key before it is hashed"),
    config::custom_option("failover_count", "failover_count",
                          "weighted hashing: children tried at most, the next on an error reply (1: no failover)",
                          read_failover_count, show_failover_count, "2", "2"),
    config::custom_option(nullptr, "load_ttl_ms",
                          "mcrouter: how long a reported load holds; ithaca reads its loads live", read_load_ttl,
                          config::show_nothing, nullptr, "100"),
    config::flag_option<&load_balancer_options::thrift_server_load>(nullptr, "enable_thrift_server_load",
                                                                    "mcrouter's thrift server load, refused when true"),
};

void finish_load_balancer(config::route_kind_reader& in, config::route_config& r) {
  if (config::options_of<load_balancer_options>(r).thrift_server_load) {
    in.fail_at("enable_thrift_server_load",
               "LoadBalancerRoute: enable_thrift_server_load is not supported by ithaca (memcached reports no load)");
  }
}

const route* build_load_balancer(tree_builder& b, const config::route_config& r) {
  std::vector<const route*> children;
  if (!b.children(r, "", true, 1, children)) return nullptr;
  if (children.size() == 1) return children[0];  // mcrouter: one child is that child
  const auto& o = config::options_of<load_balancer_options>(r);
  return b.add<load_balancer_route>(b.name_of(r), std::move(children), o.salt, o.failover_count,
                                    o.algorithm == 0 ? load_balancer_route::algorithm::WeightedHashing
                                                     : load_balancer_route::algorithm::TwoRandomChoices);
}

constexpr config::route_kind_info kLoadBalancerInfo{
    "load_balancer",
    "LoadBalancerRoute",
    "a child by key hash (weighted-hashing) or the less loaded of two at random",
    kLoadBalancerSlots,
    kLoadBalancerOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> {
      return std::make_shared<load_balancer_options>();
    },
    config::route_kind_info::collapse::NullOrSingleton,
    finish_load_balancer,
};

}  // namespace

extern constinit const kind_module kLoadBalancerKind{kLoadBalancerInfo, build_load_balancer};

}  // namespace ithaca::route
