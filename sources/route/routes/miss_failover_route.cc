// The `miss_failover` route (mcrouter's MissFailoverRoute): a get-like
// request (get, gets, gat, gats, mg, binary get) tries the children in order
// until one has the value; any other request goes to the first child only.
// A multi-key get asks each next child only for the keys still missing and
// merges what it finds, in the client's key order. When no child has a
// single-key value, the best reply seen is returned (a miss over an error:
// return_best_on_error), or the last child's.
#include <utility>
#include <vector>

#include "command_class.h"
#include "route.h"
#include "route_kind.h"
#include "route_util.h"

namespace ithaca::route {

namespace {

class miss_failover_route final : public route {
 public:
  miss_failover_route(std::string name, std::vector<const route*> children, bool return_best_on_error);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "miss_failover"; }
  std::vector<const route*> children() const override { return children_; }
  // A get tries every child while they miss; anything else the first.
  std::vector<const route*> targets_for(const protocol::request& req) const override;

 private:
  dispatch_status resume_single(request_slot& slot, dispatch_env& env) const;
  dispatch_status resume_multi(request_slot& slot, dispatch_env& env) const;
  std::vector<const route*> children_;
  bool best_on_error_;
};

}  // namespace

namespace {

bool get_like(const protocol::request& r) {
  return protocol::classify(r) == protocol::command_class::Retrieve && r.cmd != protocol::command::LeaseGet;
}

}  // namespace

miss_failover_route::miss_failover_route(std::string name, std::vector<const route*> children,
                                         bool return_best_on_error)
    : route(std::move(name)), children_(std::move(children)), best_on_error_(return_best_on_error) {}

std::vector<const route*> miss_failover_route::targets_for(const protocol::request& req) const {
  if (get_like(req)) return children_;
  return {children_[0]};
}

// frame.state: the child asked last; frame.count: the child slot holding the
// best single-key reply so far (multi-key: unused).
dispatch_status miss_failover_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  if (!get_like(slot.req) || children_.size() == 1) return children_[0]->dispatch(slot, env);
  slot.push_frame(slot_frame{this, 0, 0, 0});
  if (protocol::is_multikey_retrieval(slot.req) && slot.req.keys.size() > 1) {
    slot.result.prepare(slot.req);
    request_slot& c = slot.child_for_keys(0);
    slot.add_call();
    dispatch_child(*children_[0], c, env);
  } else {
    request_slot& c = slot.child(0);
    slot.add_call();
    dispatch_child(*children_[0], c, env);
  }
  return dispatch_status::Pending;
}

dispatch_status miss_failover_route::resume(request_slot& slot, dispatch_env& env) const {
  return protocol::is_multikey_retrieval(slot.req) && slot.req.keys.size() > 1 ? resume_multi(slot, env)
                                                                               : resume_single(slot, env);
}

dispatch_status miss_failover_route::resume_single(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  request_slot& last = slot.child_at(f.state);
  const severity got = severity_of(last.result, last.req);
  if (got == severity::Success || f.state + 1 >= children_.size()) {
    // A value, or the last child: this reply, or the best one seen.
    request_slot* answer = &last;
    if (got != severity::Success && best_on_error_) {
      for (std::uint32_t i = 0; i < f.state; ++i) {
        request_slot& c = slot.child_at(i);
        if (severity_of(c.result, c.req) < severity_of(answer->result, answer->req)) answer = &c;
      }
    }
    std::swap(slot.result, answer->result);
    return dispatch_status::Done;
  }
  route_counters::add(counters().failovers);
  f.state += 1;
  request_slot& c = slot.child(f.state);
  slot.add_call();
  dispatch_child(*children_[f.state], c, env);
  return dispatch_status::Pending;
}

dispatch_status miss_failover_route::resume_multi(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  request_slot& last = slot.child_at(f.state);
  merge_hits(slot.result, last.result, last.key_map);
  const bool last_child = f.state + 1 >= children_.size();
  // The keys still missing go to the next child.
  std::vector<std::uint32_t> missing;
  for (std::size_t i = 0; i < slot.result.key_count(); ++i) {
    if (!slot.result.hit(i).found) missing.push_back(static_cast<std::uint32_t>(i));
  }
  if (missing.empty() || last_child) {
    // Failures of earlier children whose keys a later one found do not count.
    if (missing.empty()) slot.result.failed_keys = 0;
    return dispatch_status::Done;
  }
  route_counters::add(counters().failovers);
  slot.result.failed_keys = 0;
  f.state += 1;
  request_slot& c = slot.child_for_keys(f.state, missing);
  slot.add_call();
  dispatch_child(*children_[f.state], c, env);
  return dispatch_status::Pending;
}

// ---- the kind: options, how the config formats spell them, build.

namespace {

struct miss_failover_options final : config::route_options {
  bool return_best_on_error = true;
};

constexpr config::child_slot kMissFailoverSlots[] = {
    {"", "children", "children", true, 2},
};
constexpr config::option_spec kMissFailoverOptions[] = {
    config::flag_option<&miss_failover_options::return_best_on_error>(
        "return_best_on_error", "return_best_on_error",
        "when no child has the value, the best reply seen (a miss over an error) rather than the last child's"),
};

const route* build_miss_failover(tree_builder& b, const config::route_config& r) {
  std::vector<const route*> children;
  if (!b.children(r, "", true, 1, children)) return nullptr;
  return b.add<miss_failover_route>(b.name_of(r), std::move(children),
                                    config::options_of<miss_failover_options>(r).return_best_on_error);
}

constexpr config::route_kind_info kMissFailoverInfo{
    "miss_failover",
    "MissFailoverRoute",
    "get-like requests try the next child on a miss",
    kMissFailoverSlots,
    kMissFailoverOptions,
    [](config::route_format f) -> std::shared_ptr<config::route_options> {
      auto o = std::make_shared<miss_failover_options>();
      o->return_best_on_error = f == config::route_format::Yaml;  // mcrouter's default: false
      return o;
    },
    config::route_kind_info::collapse::NullOrSingleton,
};

}  // namespace

extern constinit const kind_module kMissFailoverKind{kMissFailoverInfo, build_miss_failover};

}  // namespace ithaca::route
