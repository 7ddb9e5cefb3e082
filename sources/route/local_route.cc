#include "local_route.h"

#include "route_kind.h"

namespace ithaca::route {

dispatch_status local_route::dispatch(request_slot& slot, dispatch_env& env) const {
  slot.action = env.local->execute(slot.req, env.out);
  return dispatch_status::Done;
}

}  // namespace ithaca::route

// ---- the kind: no options; the builder gives the store (behind the ack
// gate on a master with `ack: slave`).

namespace ithaca::route {

namespace {

constexpr config::route_kind_info kLocalInfo{
    "local",
    nullptr,
    "the local store (the cache role's whole tree)",
    {},
    {},
    [](config::route_format) -> std::shared_ptr<config::route_options> {
      return std::make_shared<config::route_options>();
    },
};

const route* build_local(tree_builder& b, const config::route_config&) { return b.local_store(); }

}  // namespace

extern constinit const kind_module kLocalKind{kLocalInfo, build_local};

}  // namespace ithaca::route
