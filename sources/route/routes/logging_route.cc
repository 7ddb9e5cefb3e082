// The `logging` route (mcrouter's LoggingRoute): sends the request to its
// `target` (none: answered as `null` answers) and logs each request whose
// reply is a hit or a stored write, as mcrouter hands those to its
// postprocess callback: one info line per hit key or stored write, through
// the asynchronous logger (a worker never waits on it; past its queue lines
// are dropped and counted, log::dropped()):
//   logging route NAME: get KEY: hit (flags F, N bytes)
//   logging route NAME: set KEY: stored (N bytes)
// Other replies (misses, errors) are answered and not logged. Counted in
// `stats routes` as logged_replies.
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"

namespace ithaca::route {

namespace {

using protocol::command;
using protocol::routed_outcome;

class logging_route final : public route {
 public:
  logging_route(std::string name, const route* target) : route(std::move(name)), target_(target) {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "logging"; }
  std::vector<const route*> children() const override {
    return target_ != nullptr ? std::vector<const route*>{target_} : std::vector<const route*>{};
  }
  void kind_counters(const counter_out& out) const override {
    out("logged_replies", logged_.load(std::memory_order_relaxed));
  }

 private:
  void log_reply(const request_slot& slot) const;
  const route* target_;  // null: a NullRoute's replies
  mutable std::atomic<std::uint64_t> logged_{0};
};

// mcrouter's operation names for what a client can send.
std::string_view logging_op_name(command c) {
  switch (c) {
    case command::Get: return "get";
    case command::Gets: return "gets";
    case command::Gat: return "gat";
    case command::Gats: return "gats";
    case command::Set: return "set";
    case command::Add: return "add";
    case command::Replace: return "replace";
    case command::Append: return "append";
    case command::Prepend: return "prepend";
    case command::Cas: return "cas";
    case command::LeaseGet: return "lease-get";
    case command::LeaseSet: return "lease-set";
    case command::MetaGet:
    case command::McMetaget: return "metaget";
    case command::MetaSet: return "metaset";
    default: return "request";
  }
}

}  // namespace

void logging_route::log_reply(const request_slot& slot) const {
  const protocol::request& req = slot.req;
  const protocol::routed_result& r = slot.result;
  const std::string_view op = logging_op_name(req.cmd);
  if (r.outcome == routed_outcome::Hits) {
    for (std::size_t i = 0; i < r.key_count() && i < req.keys.size(); ++i) {
      const protocol::routed_result::key_hit& h = r.hit(i);
      if (!h.found) continue;
      route_counters::add(logged_);
      spdlog::info("logging route {}: {} {}: hit (flags {}, {} bytes)", name(), op, req.keys[i], h.flags, h.length);
    }
  } else if (r.outcome == routed_outcome::Stored) {
    route_counters::add(logged_);
    spdlog::info("logging route {}: {} {}: stored ({} bytes)", name(), op, req.key(), req.value.size());
  }
}

dispatch_status logging_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  if (target_ == nullptr) {
    default_reply(slot.req, slot.result);  // a miss, NOT_STORED...: nothing to log
    return dispatch_status::Pending;       // no calls: ready at once, in order
  }
  slot.push_frame({this, 0, 0, 0});
  dispatch_child(*target_, slot, env);
  return dispatch_status::Pending;
}

dispatch_status logging_route::resume(request_slot& slot, dispatch_env&) const {
  log_reply(slot);
  return dispatch_status::Done;
}

// ---- the kind: an optional target, no options.

namespace {

constexpr config::child_slot kLoggingSlots[] = {
    {"target", "target", "target", false, 0},
};
constexpr route_stat kLoggingStats[] = {
    {"logged_replies", "logging: hits and stored writes logged (one per key)."},
};

const route* build_logging(tree_builder& b, const config::route_config& r) {
  const route* target = nullptr;
  if (!r.with_role("target").empty() && (target = b.child(r, "target", true)) == nullptr) return nullptr;
  return b.add<logging_route>(b.name_of(r), target);
}

constexpr config::route_kind_info kLoggingInfo{
    "logging",
    "LoggingRoute",
    "logs the hits and stored writes its target answers",
    kLoggingSlots,
    {},
    [](config::route_format) { return std::make_shared<config::route_options>(); },
};

}  // namespace

extern constinit const kind_module kLoggingKind{kLoggingInfo, build_logging, kLoggingStats};

}  // namespace ithaca::route
