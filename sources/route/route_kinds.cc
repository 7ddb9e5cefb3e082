// The registry of route kind modules (route_kind.h): one line per kind.
#include "route_kind.h"

namespace ithaca::route {

// Each defined in its module (routes/, and local_route.cc).
extern const kind_module kLocalKind;
extern const kind_module kPoolKind;
extern const kind_module kPrefixKind;
extern const kind_module kRoutingPrefixKind;
extern const kind_module kOperationKind;
extern const kind_module kRoutingGroupKind;
extern const kind_module kFailoverKind, kFailoverExptimeKind, kSaltedFailoverKind;
extern const kind_module kMissFailoverKind;
extern const kind_module kAllSyncKind, kAllAsyncKind, kAllInitialKind, kAllMajorityKind, kAllFastestKind;
extern const kind_module kShadowKind;
extern const kind_module kWarmUpKind;
extern const kind_module kL1L2Kind;
extern const kind_module kL1L2CacheKind;
extern const kind_module kHashKind;
extern const kind_module kRandomKind;
extern const kind_module kLoadBalancerKind;
extern const kind_module kModifyExptimeKind;
extern const kind_module kRateLimitKind;
extern const kind_module kShardSplitKind;
extern const kind_module kSlowWarmUpKind;
extern const kind_module kBigValueKind;
extern const kind_module kKeySplitKind;
extern const kind_module kErrorKind;
extern const kind_module kNullKind;
extern const kind_module kDevNullKind;
extern const kind_module kOnlyGetsKind;
extern const kind_module kLatencyInjectionKind;
extern const kind_module kL1L2SizeSplitKind;
extern const kind_module kMigrateKind;
extern const kind_module kModifyKeyKind;
extern const kind_module kHostIdKind;
extern const kind_module kLoggingKind;
extern const kind_module kCarbonLookasideKind;

namespace {
// The README's order ("Routes"), which messages listing the kinds follow.
constexpr const kind_module* kKinds[] = {
    // clang-format off: one kind per line, so adding one is a one-line change
    &kLocalKind,
    &kPoolKind,
    &kPrefixKind,
    &kRoutingPrefixKind,
    &kOperationKind,
    &kRoutingGroupKind,
    &kFailoverKind,
    &kFailoverExptimeKind,
    &kSaltedFailoverKind,
    &kMissFailoverKind,
    &kAllSyncKind,
    &kAllAsyncKind,
    &kAllInitialKind,
    &kAllMajorityKind,
    &kAllFastestKind,
    &kShadowKind,
    &kWarmUpKind,
    &kL1L2Kind,
    &kL1L2CacheKind,
    &kHashKind,
    &kRandomKind,
    &kLoadBalancerKind,
    &kModifyExptimeKind,
    &kRateLimitKind,
    &kShardSplitKind,
    &kSlowWarmUpKind,
    &kBigValueKind,
    &kKeySplitKind,
    &kErrorKind,
    &kNullKind,
    &kDevNullKind,
    &kOnlyGetsKind,
    &kLatencyInjectionKind,
    &kL1L2SizeSplitKind,
    &kMigrateKind,
    &kModifyKeyKind,
    &kHostIdKind,
    &kLoggingKind,
    &kCarbonLookasideKind,
    // clang-format on
};
}  // namespace

std::span<const kind_module* const> route_kinds() { return kKinds; }

const kind_module* find_route_kind(std::string_view name) {
  for (const kind_module* k : kKinds) {
    if (name == k->config.name) return k;
  }
  return nullptr;
}

void register_route_kinds() {
  for (const kind_module* k : kKinds) config::register_route_kind(k->config);
}

std::string tree_builder::name_of(const config::route_config& r) {
  return r.name.empty() ? std::string(config::kind_name(r)) : r.name;
}

}  // namespace ithaca::route
