// The `modify_exptime` route (mcrouter's ModifyExptimeRoute): writes and
// touches go to the child with their exptime set to `exptime` (action set)
// or capped at it (action min: a longer TTL, or none, becomes it). Other
// requests pass unchanged. An mcrouter exptime may be negative (-1: every
// write expires at once, as memcached takes it).
#include <climits>
#include <cstdint>
#include <ctime>

#include "mcrouter_json.h"
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
    if (cap_ && exptime_ < 0) {
      // mcrouter's min of a negative exptime: no TTL or a longer one becomes
      // it (every write then expires at once, as with action set).
      const std::int64_t e = exptime_of(slot.req);
      if (e == 0 || e > exptime_) set_exptime(slot.req, exptime_);
    } else if (cap_) {
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
  // mcrouter's exptime: any 32-bit integer (-1: every write expires at once,
  // as memcached takes a negative exptime; over 30 days an absolute time).
  std::int64_t mcrouter_exptime = 0;
  bool mcrouter = false;  // read from an mcrouter file: mcrouter_exptime holds it
};

void read_mcrouter_exptime(config::route_kind_reader& in, const char* key, config::route_config&,
                           config::route_options& opts) {
  auto& o = static_cast<modify_exptime_options&>(opts);
  std::int64_t v = 0;
  if (!config::mcrouter::as_int(*in.value(key), v) || v < INT32_MIN || v > INT32_MAX) {
    in.fail_at(key, "ModifyExptimeRoute: exptime is not an int");
    return;
  }
  o.mcrouter_exptime = v;
  o.exptime = v > 0 ? static_cast<std::uint32_t>(v) : 0;  // what describe_options shows
}

std::string show_mcrouter_exptime(const config::route_options& opts) {
  return std::to_string(static_cast<const modify_exptime_options&>(opts).mcrouter_exptime);
}

constexpr config::child_slot kModifyExptimeSlots[] = {
    {"target", "target", "target", false, 1, "ModifyExptimeRoute: no target"},
};
constexpr config::option_spec kModifyExptimeOptions[] = {
    config::choice_option<&modify_exptime_options::action>(
        "action", "action", kActions, "set: the exptime of every write becomes `exptime`; min: it is capped at it"),
    config::seconds_option<&modify_exptime_options::exptime>("exptime", nullptr,
                                                             "what to set, or the cap with action: min", true),
    config::custom_option(nullptr, "exptime",
                          "what to set, or the cap with action min: any 32-bit integer (-1: writes expire at once)",
                          read_mcrouter_exptime, show_mcrouter_exptime, nullptr, "-1", true),
};

// mcrouter: a cap of 0 is no cap, and the route is its target alone.
void finish_modify_exptime(config::route_kind_reader& reader, config::route_config& r) {
  const auto& o = config::options_of<modify_exptime_options>(r);
  if (reader.format() == config::route_format::Mcrouter && o.action == 1 && o.mcrouter_exptime == 0 &&
      r.children.size() == 1) {
    config::route_config target = std::move(r.children[0]);
    target.role.clear();
    r = std::move(target);
  }
}

const route* build_modify_exptime(tree_builder& b, const config::route_config& r) {
  const route* child = b.child(r, "target", false);
  if (child == nullptr) return nullptr;
  const auto& o = config::options_of<modify_exptime_options>(r);
  return b.add<modify_exptime_route>(b.name_of(r), *child, o.mcrouter ? o.mcrouter_exptime : o.exptime, o.action == 1);
}

constexpr config::route_kind_info kModifyExptimeInfo{
    "modify_exptime",
    "ModifyExptimeRoute",
    "sets or caps the exptime of writes",
    kModifyExptimeSlots,
    kModifyExptimeOptions,
    [](config::route_format f) -> std::shared_ptr<config::route_options> {
      auto o = std::make_shared<modify_exptime_options>();
      o->mcrouter = f == config::route_format::Mcrouter;
      return o;
    },
    config::route_kind_info::collapse::None,
    finish_modify_exptime,
};

}  // namespace

extern constinit const kind_module kModifyExptimeKind{kModifyExptimeInfo, build_modify_exptime};

}  // namespace ithaca::route
