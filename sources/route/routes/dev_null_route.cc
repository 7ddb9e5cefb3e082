// The `dev_null` route (mcrouter's DevNullRoute): drops every request and
// answers as `null` does (a get misses, a store is NOT_STORED, a delete,
// touch or arithmetic NOT_FOUND, flush_all OK: route_util's default_reply),
// counting each one, as mcrouter counts dev_null_requests, in `stats
// routes` (route:N:dev_null_requests) and on the metrics page. Nothing is
// sent anywhere, so any composite may hold it (mcrouter's sample puts it
// under a prefix: "null" keys go nowhere).
#include <atomic>
#include <cstdint>
#include <string>

#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"

namespace ithaca::route {

namespace {

class dev_null_route final : public route {
 public:
  explicit dev_null_route(std::string name) : route(std::move(name)) {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "dev_null"; }
  void kind_counters(const counter_out& out) const override {
    out("dev_null_requests", dropped_.load(std::memory_order_relaxed));
  }

 private:
  mutable std::atomic<std::uint64_t> dropped_{0};  // any worker
};

}  // namespace

dispatch_status dev_null_route::dispatch(request_slot& slot, dispatch_env&) const {
  route_counters::add(counters().requests);
  route_counters::add(dropped_);
  default_reply(slot.req, slot.result);
  return dispatch_status::Pending;  // no calls: ready at once, in order
}

// ---- the kind: no children, no options.

namespace {

constexpr route_stat kDevNullStats[] = {
    {"dev_null_requests", "dev_null: requests dropped (answered as if nothing were there)."},
};

const route* build_dev_null(tree_builder& b, const config::route_config& r) {
  return b.add<dev_null_route>(b.name_of(r));
}

constexpr config::route_kind_info kDevNullInfo{
    "dev_null",
    "DevNullRoute",
    "drops every request, answers as null does and counts it (dev_null_requests)",
    {},
    {},
    [](config::route_format) { return std::make_shared<config::route_options>(); },
};

}  // namespace

extern constinit const kind_module kDevNullKind{kDevNullInfo, build_dev_null, kDevNullStats};

}  // namespace ithaca::route
