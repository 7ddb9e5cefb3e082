// The `modify_exptime` route (mcrouter's ModifyExptimeRoute): writes and
// touches go to the child with their exptime set to `exptime` (action set)
// or capped at it (action min: a longer TTL, or none, becomes it). Other
// requests pass unchanged.
#include <cstdint>
#include <ctime>

#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"

namespace ithaca::route {

namespace {

class modify_exptime_route final : public route {
 public:
  modify_exptime_route(std::string name, const route& child, std::int64_t exptime, bool cap);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  bool answers_in_result() const override { return child_.answers_in_result(); }
  const char* kind() const override { return "modify_exptime"; }
  std::vector<const route*> children() const override { return {&child_}; }
  // mcrouter's "modify-exptime|ACTION|exptime=N".
  std::string handle_name() const override {
    return std::string("modify-exptime|") + (cap_ ? "min" : "set") + "|exptime=" + std::to_string(exptime_);
  }

 private:
  const route& child_;
  std::int64_t exptime_;
  bool cap_;
};

}  // namespace

modify_exptime_route::modify_exptime_route(std::string name, const route& child, std::int64_t exptime, bool cap)
    : route(std::move(name)), child_(child), exptime_(exptime), cap_(cap) {}

dispatch_status modify_exptime_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  if (carries_exptime(slot.req)) {
    if (cap_) {
      cap_exptime(slot.req, static_cast<std::uint32_t>(exptime_), static_cast<std::int64_t>(std::time(nullptr)));
    } else {
      set_exptime(slot.req, exptime_);
    }
  }
  return child_.dispatch(slot, env);
}

// ---- the kind: options, how the config formats spell them, build.

namespace {

constexpr const char* kActions[] = {"set", "min"};
struct modify_exptime_options final : config::route_options {
  std::uint32_t exptime = 0;
  int action = 0;  // kActions: set, or cap (min)
};

constexpr config::child_slot kModifyExptimeSlots[] = {
    {"target", "target", "target", false, 1, "ModifyExptimeRoute: no target"},
};
constexpr config::option_spec kModifyExptimeOptions[] = {
    config::choice_option<&modify_exptime_options::action>(
        "action", "action", kActions, "set: the exptime of every write becomes `exptime`; min: it is capped at it"),
    config::seconds_option<&modify_exptime_options::exptime>("exptime", "exptime",
                                                             "what to set, or the cap with action: min", true),
};

// mcrouter: a cap of 0 is no cap, and the route is its target alone.
void finish_modify_exptime(config::route_kind_reader& reader, config::route_config& r) {
  const auto& o = config::options_of<modify_exptime_options>(r);
  if (reader.format() == config::route_format::Mcrouter && o.action == 1 && o.exptime == 0 && r.children.size() == 1) {
    config::route_config target = std::move(r.children[0]);
    target.role.clear();
    r = std::move(target);
  }
}

const route* build_modify_exptime(tree_builder& b, const config::route_config& r) {
  const route* child = b.child(r, "target", false);
  if (child == nullptr) return nullptr;
  const auto& o = config::options_of<modify_exptime_options>(r);
  return b.add<modify_exptime_route>(b.name_of(r), *child, o.exptime, o.action == 1);
}

constexpr config::route_kind_info kModifyExptimeInfo{
    "modify_exptime",
    "ModifyExptimeRoute",
    "sets or caps the exptime of writes",
    kModifyExptimeSlots,
    kModifyExptimeOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> {
      return std::make_shared<modify_exptime_options>();
    },
    config::route_kind_info::collapse::None,
    finish_modify_exptime,
};

}  // namespace

extern constinit const kind_module kModifyExptimeKind{kModifyExptimeInfo, build_modify_exptime};

}  // namespace ithaca::route
