#include "hash_route.h"

#include "hash_kind.h"
#include "route_kind.h"
#include "route_kind_reader.h"

namespace ithaca::route {

hash_route::hash_route(std::string name, std::vector<const route*> targets, std::unique_ptr<proxy::distribution> dist,
                       std::string hash_name, std::string salt)
    : selector_route(std::move(name), std::move(targets), true),
      dist_(std::move(dist)),
      hash_name_(std::move(hash_name)),
      salt_(std::move(salt)) {}

// mcrouter's hashWithSalt: the hash of the key followed by the salt.
// [any worker; the buffer is the thread's own]
std::size_t hash_route::pick(const protocol::request&, std::string_view key) const {
  if (salt_.empty()) return dist_->locate(key);
  thread_local std::string salted;
  salted.assign(key);
  salted.append(salt_);
  return dist_->locate(salted);
}

}  // namespace ithaca::route

// ---- the kind: options, how the config formats spell them, build.

namespace ithaca::route {

namespace {

constexpr auto kHashNames = kinds::name_array(kinds::kHashKindNames);
// The distributions that need nothing but the number of children; mcrouter's
// hash_func names its first two.
constexpr kinds::distribution_kind kDistributions[] = {
    kinds::distribution_kind::Ch3, kinds::distribution_kind::McrouterCrc32, kinds::distribution_kind::Modula,
    kinds::distribution_kind::Jump};
constexpr const char* kDistributionNames[] = {"ch3", "mcrouter_crc32", "modula", "jump"};
constexpr const char* kHashFuncNames[] = {"Ch3", "Crc32"};

struct hash_options final : config::route_options {
  int hash = static_cast<int>(kinds::hash_kind::Md5);  // index into kHashNames (the enum's order)
  int distribution = 0;                                // index into kDistributions
  bool error_on_empty = true;                          // mcrouter: no children is an ErrorRoute, else a NullRoute
  std::string salt;                                    // appended to each key before hashing
};
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
                                                       "mcrouter's hash function: Ch3 (its default) or Crc32"),
    config::text_option<&hash_options::salt>("salt", "salt",
                                             "appended to each key before it is hashed (mcrouter's salt)"),
    config::flag_option<&hash_options::error_on_empty>(
        nullptr, "error_on_empty", "mcrouter: with no children, an error (true, its default) or a NullRoute"),
};

// mcrouter's reductions: one child is that child; none is an ErrorRoute (or
// a NullRoute without error_on_empty).
void finish_hash(config::route_kind_reader& in, config::route_config& r) {
  if (in.format() != config::route_format::Mcrouter) return;
  const auto& o = config::options_of<hash_options>(r);
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
  for (std::size_t i = 0; i < children.size(); ++i)
    specs.push_back(proxy::server_spec{"child:" + std::to_string(i), 1});
  std::string why;
  auto dist =
      proxy::make_distribution(kDistributions[o.distribution], specs, kinds::kHashKindNames[o.hash].value, &why);
  if (!dist) return b.fail(r, why);
  const std::string hash_name =
      o.distribution < 2 ? kHashFuncNames[o.distribution] : kDistributionNames[o.distribution];
  return b.add<hash_route>(b.name_of(r), std::move(children), std::move(dist), hash_name, o.salt);
}

constexpr config::route_kind_info kHashInfo{
    "hash",
    "HashRoute",
    "a child by the key's hash, placed as a pool places servers",
    kHashSlots,
    kHashOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> { return std::make_shared<hash_options>(); },
    config::route_kind_info::collapse::None,
    finish_hash,
};

}  // namespace

extern constinit const kind_module kHashKind{kHashInfo, build_hash};

}  // namespace ithaca::route
