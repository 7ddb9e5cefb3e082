// The `migrate` route (mcrouter's MigrateRoute): moves traffic from one
// route to another over time, key by key. Each key has its own migration
// time, start_time + interval + spooky32(routing key) % interval (mcrouter's
// SpookyHashV2 of the key up to its hash stop "|#|"), so the keys move
// smoothly across the second interval:
//   before start_time                  everything goes to `from`;
//   start_time .. the key's time       deletes to both, the rest to `from`;
//   the key's time .. start + 2*interval  deletes to both, the rest to `to`;
//   after start_time + 2 * interval    everything goes to `to`.
// A delete sent to both answers the worse of the two replies (mcrouter's
// order of results: route_util's severity_of), `from`'s when they are alike.
// A multi-key get whose keys fall on both sides is split (selector_route.h).
// The clock is the wall clock (time(2)), as mcrouter's.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <string_view>

#include "command_class.h"
#include "hash/hash_functions.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"
#include "selector_route.h"
#include "units.h"
#include "yaml_section.h"

namespace ithaca::route {

namespace {

constexpr std::uint32_t kMigrateDeleteBoth = 1;  // frame.state of a delete sent to both

class migrate_route final : public selector_route {
 public:
  migrate_route(std::string name, const route& from, const route& to, std::int64_t start, std::int64_t interval)
      : selector_route(std::move(name), {&from, &to}, true), start_(start), interval_(interval) {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "migrate"; }
  std::vector<const route*> targets_for(const protocol::request& req) const override;

 protected:
  std::size_t pick(const protocol::request& req, std::string_view key) const override;

 private:
  // When `key` moves from `from` to `to` (unix seconds).
  std::int64_t migration_time(std::string_view key) const;
  bool both_for_delete(std::int64_t now) const { return now >= start_ && now < start_ + 2 * interval_; }
  std::int64_t start_;
  std::int64_t interval_;  // > 0
};

bool migrate_is_delete(const protocol::request& req) {
  return protocol::classify(req) == protocol::command_class::Delete;
}

}  // namespace

std::int64_t migrate_route::migration_time(std::string_view key) const {
  const std::size_t stop = key.find("|#|");
  const std::string_view routing = stop == std::string_view::npos ? key : key.substr(0, stop);
  // (A routing prefix is off the key already: routing_prefix_route.cc.)
  return start_ + interval_ + static_cast<std::int64_t>(proxy::spooky_v2_hash32(routing, 0) % interval_);
}

std::size_t migrate_route::pick(const protocol::request& req, std::string_view key) const {
  const std::int64_t now = std::time(nullptr);
  if (migrate_is_delete(req)) return now < start_ ? 0 : 1;  // both: dispatch() sends it
  return now < migration_time(key) ? 0 : 1;
}

std::vector<const route*> migrate_route::targets_for(const protocol::request& req) const {
  if (migrate_is_delete(req) && both_for_delete(std::time(nullptr))) return targets();
  return selector_route::targets_for(req);
}

dispatch_status migrate_route::dispatch(request_slot& slot, dispatch_env& env) const {
  if (!migrate_is_delete(slot.req) || !both_for_delete(std::time(nullptr)) || !answers_in_result()) {
    return selector_route::dispatch(slot, env);
  }
  route_counters::add(counters().requests);
  slot.push_frame(slot_frame{this, kMigrateDeleteBoth, 0, 0});
  for (std::size_t t = 0; t < 2; ++t) {
    request_slot& c = slot.child(t);
    c.req.noreply = false;  // the worse reply is the client's
    slot.add_call();
    dispatch_child(*targets()[t], c, env);
  }
  return dispatch_status::Pending;
}

dispatch_status migrate_route::resume(request_slot& slot, dispatch_env& env) const {
  if (slot.top_frame().state != kMigrateDeleteBoth) return selector_route::resume(slot, env);
  const request_slot& from = slot.child_at(0);
  const request_slot& to = slot.child_at(1);
  const bool to_worse = severity_of(to.result, to.req) > severity_of(from.result, from.req);
  slot.result = to_worse ? to.result : from.result;
  return dispatch_status::Done;
}

// ---- the kind: options, how the config formats spell them, build.

namespace {

struct migrate_options final : config::route_options {
  std::int64_t start_time = 0;
  std::int64_t interval = 3600;
  bool has_start = false;
};

// An integer of seconds (start_time: a unix time; interval: above 0).
bool migrate_read_int(config::route_kind_reader& in, const YAML::Node& v, std::int64_t& out) {
  if (!v.IsScalar()) return false;
  const std::string& t = v.Scalar();
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(t.c_str(), &end, 10);
  if (t.empty() || end != t.c_str() + t.size() || errno != 0) return false;
  (void)in;
  out = n;
  return true;
}

void migrate_read_start(config::route_kind_reader& in, const char* key, config::route_config&,
                        config::route_options& opts) {
  auto& o = static_cast<migrate_options&>(opts);
  const YAML::Node& v = *in.value(key);
  if (!migrate_read_int(in, v, o.start_time)) {
    in.fail_node(v, in.format() == config::route_format::Yaml
                        ? "start_time: expected a unix time in seconds, got " + config::describe_node(v)
                        : "MigrateRoute has no/invalid start_time");
    return;
  }
  o.has_start = true;
}
std::string migrate_show_start(const config::route_options& o) {
  return std::to_string(static_cast<const migrate_options&>(o).start_time);
}

void migrate_read_interval(config::route_kind_reader& in, const char* key, config::route_config&,
                           config::route_options& opts) {
  auto& o = static_cast<migrate_options&>(opts);
  const YAML::Node& v = *in.value(key);
  std::int64_t n = 0;
  const bool yaml = in.format() == config::route_format::Yaml;
  std::uint64_t ms = 0;
  bool ok = false;
  if (yaml && v.IsScalar() && config::parse_duration(v.Scalar(), ms) && ms % 1000 == 0) {
    n = static_cast<std::int64_t>(ms / 1000);
    ok = true;
  } else if (!yaml) {
    ok = migrate_read_int(in, v, n);
  }
  if (!ok || n <= 0 || n > 10LL * 365 * 24 * 3600) {
    in.fail_node(
        v, yaml ? "interval: expected a duration in whole seconds above 0 (4s, 1h), got " + config::describe_node(v)
                : "MigrateRoute interval is not integer (above 0)");
    return;
  }
  o.interval = n;
}
std::string migrate_show_interval(const config::route_options& o) {
  return std::to_string(static_cast<const migrate_options&>(o).interval) + "s";
}

constexpr config::child_slot kMigrateSlots[] = {
    {"from", "from", "from", false, 1, "MigrateRoute has no 'from' route"},
    {"to", "to", "to", false, 1, "MigrateRoute has no 'to' route"},
};
constexpr config::option_spec kMigrateOptions[] = {
    config::custom_option("start_time", "start_time",
                          "when the migration starts (unix seconds): deletes go to both from then on",
                          migrate_read_start, migrate_show_start, "1700000000", "1700000000", true),
    config::custom_option("interval", "interval",
                          "half the migration's length: keys move to `to` during the second interval (default 1h)",
                          migrate_read_interval, migrate_show_interval, "4s", "4"),
};

const route* build_migrate(tree_builder& b, const config::route_config& r) {
  const route* from = b.child(r, "from", false);
  const route* to = b.child(r, "to", false);
  if (from == nullptr || to == nullptr) return nullptr;
  const auto& o = config::options_of<migrate_options>(r);
  return b.add<migrate_route>(b.name_of(r), *from, *to, o.start_time, o.interval);
}

constexpr config::route_kind_info kMigrateInfo{
    "migrate",
    "MigrateRoute",
    "moves keys from one route to another over time (deletes to both meanwhile)",
    kMigrateSlots,
    kMigrateOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> { return std::make_shared<migrate_options>(); },
};

}  // namespace

extern constinit const kind_module kMigrateKind{kMigrateInfo, build_migrate};

}  // namespace ithaca::route
