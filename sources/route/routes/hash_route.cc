#include "hash_route.h"

#include <iterator>

#include "hash_kind.h"
#include "mcrouter_json.h"
#include "route_kind.h"
#include "route_kind_reader.h"

namespace ithaca::route {

hash_route::hash_route(std::string name, std::vector<const route*> targets, std::unique_ptr<proxy::distribution> dist,
                       std::string hash_name, std::string salt, bool hash_stop)
    : selector_route(std::move(name), std::move(targets), true),
      dist_(std::move(dist)),
      hash_name_(std::move(hash_name)),
      salt_(std::move(salt)) {
  hash_options_.hash_stop = hash_stop;
}

// mcrouter's hashWithSalt: the hash of the key (up to its hash stop)
// followed by the salt. [any worker; the buffer is the thread's own]
std::size_t hash_route::pick(const protocol::request&, std::string_view key) const {
  const std::string_view part = proxy::key_hash_part(key, hash_options_);
  if (salt_.empty()) return dist_->locate(part);
  thread_local std::string salted;
  salted.assign(part);
  salted.append(salt_);
  return dist_->locate(salted);
}

}  // namespace ithaca::route

// ---- the kind: options, how the config formats spell them, build.

namespace ithaca::route {

namespace {

constexpr auto kHashNames = kinds::name_array(kinds::kHashKindNames);
// The distributions that need nothing but the children (and weighted_ch3
// their `weights`); mcrouter's hash_func names its first four.
constexpr kinds::distribution_kind kDistributions[] = {
    kinds::distribution_kind::Ch3,        kinds::distribution_kind::McrouterCrc32,
    kinds::distribution_kind::WeightedCh3, kinds::distribution_kind::ConstShard,
    kinds::distribution_kind::Modula,     kinds::distribution_kind::Jump};
constexpr const char* kDistributionNames[] = {"ch3", "mcrouter_crc32", "weighted_ch3", "const_shard", "modula", "jump"};
constexpr const char* kHashFuncNames[] = {"Ch3", "Crc32", "WeightedCh3", "ConstShard"};
constexpr int kWeightedCh3 = 2;
static_assert(kDistributions[kWeightedCh3] == kinds::distribution_kind::WeightedCh3);

struct hash_options final : config::route_options {
  int hash = static_cast<int>(kinds::hash_kind::Md5);  // index into kHashNames (the enum's order)
  int distribution = 0;                                // index into kDistributions
  bool error_on_empty = true;                          // mcrouter: no children is an ErrorRoute, else a NullRoute
  std::string salt;                                    // appended to each key before hashing
  std::vector<double> weights;                         // weighted_ch3: each child's share, in [0, 1]
  bool have_weights = false;
  bool hash_stop = false;  // mcrouter's routing key: the key up to "|#|" (an mcrouter config's default)
};

// `weights`: a list of numbers from 0 to 1 (in an mcrouter file, mcrouter's
// WeightedChHashFunc words for what is wrong).
void read_weights(config::route_kind_reader& in, const char* key, config::route_config&, config::route_options& o) {
  auto& out = static_cast<hash_options&>(o);
  const YAML::Node* v = in.value(key);
  if (v == nullptr) return;
  const bool mcrouter = in.format() == config::route_format::Mcrouter;
  if (!v->IsSequence()) {
    in.fail_node(*v, mcrouter ? "WeightedChHashFunc: weights is not array" : "weights: a list of numbers from 0 to 1");
    return;
  }
  out.have_weights = true;
  for (const YAML::Node& e : *v) {
    double d = 0;
    if (!config::mcrouter::as_number(e, d) || d < 0 || d > 1) {
      in.fail_node(e, mcrouter ? "WeightedChHashFunc: weight must be in range [0, 1.0]"
                               : "weights: each is a number from 0 to 1");
      return;
    }
    out.weights.push_back(d);
  }
}

std::string show_weights(const config::route_options& o) {
  const auto& h = static_cast<const hash_options&>(o);
  std::string out;
  for (std::size_t i = 0; i < h.weights.size(); ++i) {
    if (i) out += ',';
    out += config::number_text(h.weights[i]);
  }
  return out;
}
static_assert(kinds::kHashKindNames[static_cast<int>(kinds::hash_kind::Md5)].value == kinds::hash_kind::Md5);

constexpr config::child_slot kHashSlots[] = {
    {"", "children", "children", true, 1},
};
constexpr config::option_spec kHashOptions[] = {
    config::choice_option<&hash_options::hash>("hash", nullptr, kHashNames,
                                               "the key hash the distribution places by (md5 by default)"),
    config::choice_option<&hash_options::distribution>("distribution", nullptr, kDistributionNames,
                                                       "how a hash picks a child (ch3 by default, as mcrouter)"),
    config::choice_option<&hash_options::distribution>(nullptr, "hash_func", kHashFuncNames,
                                                       "mcrouter's hash function: Ch3 (its default), Crc32, WeightedCh3 or ConstShard"),
    config::text_option<&hash_options::salt>("salt", "salt",
                                             "appended to each key before it is hashed (mcrouter's salt)"),
    config::custom_option("weights", "weights",
                          "weighted_ch3 (WeightedCh3): each child's share of its keys, a number from 0 to 1 "
                          "(0.5 for a child without one)",
                          read_weights, show_weights, "[0.5, 1]", "[0.5, 1]"),
    config::flag_option<&hash_options::error_on_empty>(
        nullptr, "error_on_empty", "mcrouter: with no children, an error (true, its default) or a NullRoute"),
};

// weighted_ch3 needs its weights (mcrouter's words); mcrouter's reductions:
// one child is that child; none is an ErrorRoute (or a NullRoute without
// error_on_empty).
void finish_hash(config::route_kind_reader& in, config::route_config& r) {
  const auto& o = config::options_of<hash_options>(r);
  if (o.distribution == kWeightedCh3 && !o.have_weights) {
    in.fail(in.format() == config::route_format::Mcrouter
                ? "WeightedChHashFunc: not an object or no weights"
                : "distribution weighted_ch3 needs `weights` (each child's share, from 0 to 1)");
    return;
  }
  if (in.format() != config::route_format::Mcrouter) return;
  if (r.children.size() == 1) {
    config::become_only_child(r);
  } else if (r.children.empty()) {
    r = o.error_on_empty ? config::module_node("error", config::route_format::Mcrouter, r.line,
                                               {{"message", "HashRoute with empty children, name: " + r.name}})
                         : config::module_node("null", config::route_format::Mcrouter, r.line);
  }
}

const route* build_hash(tree_builder& b, const config::route_config& r) {
  std::vector<const route*> children;
  if (!b.children(r, "", false, 1, children)) return nullptr;
  const auto& o = config::options_of<hash_options>(r);
  std::vector<proxy::server_spec> specs;
  for (std::size_t i = 0; i < children.size(); ++i) {
    // weighted_ch3: mcrouter's 0.5 for a child its weights miss.
    const double fraction = o.distribution != kWeightedCh3 ? -1.0 : i < o.weights.size() ? o.weights[i] : 0.5;
    specs.push_back(proxy::server_spec{"child:" + std::to_string(i), 1, fraction});
  }
  std::string why;
  auto dist =
      proxy::make_distribution(kDistributions[o.distribution], specs, kinds::kHashKindNames[o.hash].value, &why);
  if (!dist) return b.fail(r, why);
  const std::string hash_name = o.distribution < static_cast<int>(std::size(kHashFuncNames))
                                    ? kHashFuncNames[o.distribution]
                                    : kDistributionNames[o.distribution];
  return b.add<hash_route>(b.name_of(r), std::move(children), std::move(dist), hash_name, o.salt, o.hash_stop);
}

constexpr config::route_kind_info kHashInfo{
    "hash",
    "HashRoute",
    "a child by the key's hash, placed as a pool places servers",
    kHashSlots,
    kHashOptions,
    [](config::route_format f) -> std::shared_ptr<config::route_options> {
      auto o = std::make_shared<hash_options>();
      o->hash_stop = f == config::route_format::Mcrouter;
      return o;
    },
    config::route_kind_info::collapse::None,
    finish_hash,
};

}  // namespace

extern constinit const kind_module kHashKind{kHashInfo, build_hash};

}  // namespace ithaca::route
