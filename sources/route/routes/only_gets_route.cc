// The `only_gets` route: mcrouter's --allow-only-gets as a node of the tree.
// Reads (get gets gat gats, lease-get, metaget, mg, me) go to its child;
// every other request (a store, delete, arithmetic, touch, flush) is answered
// as `null` answers it (route_util's default_reply: a store NOT_STORED, a
// delete, touch or arithmetic NOT_FOUND) and sent nowhere, as mcrouter's
// RootRoute answers non-get-like requests with their default reply under
// that flag. gat and gats are reads here, as in mcrouter (GetLike requests),
// although they change the item's TTL: an operation route cannot make that
// cut, since it selects by class and gat is in the touch class.
// `ithaca --mcrouter --allow-only-gets` puts it above the tree (cli.cc);
// a YAML config may use it too. [worker threads; no state of its own]
#include <atomic>
#include <cstdint>
#include <string>

#include "command_class.h"
#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"

namespace ithaca::route {

namespace {

class only_gets_route final : public route {
 public:
  only_gets_route(std::string name, const route& child) : route(std::move(name)), child_(child) {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "only_gets"; }
  std::vector<const route*> children() const override { return {&child_}; }
  // Its refusals answer in slot.result; its reads answer where the child does.
  bool answers_in_result() const override { return child_.answers_in_result(); }
  void kind_counters(const counter_out& out) const override {
    out("only_gets_refused", refused_.load(std::memory_order_relaxed));
  }

 private:
  const route& child_;
  mutable std::atomic<std::uint64_t> refused_{0};  // any worker
};

bool reads_only(const protocol::request& r) {
  const protocol::command_class c = protocol::classify(r);
  return c == protocol::command_class::Retrieve || c == protocol::command_class::Debug;
}

}  // namespace

dispatch_status only_gets_route::dispatch(request_slot& slot, dispatch_env& env) const {
  if (reads_only(slot.req)) return child_.dispatch(slot, env);
  route_counters::add(counters().requests);
  route_counters::add(refused_);
  default_reply(slot.req, slot.result);
  return dispatch_status::Pending;  // no calls: ready at once, in order (as dev_null)
}

// ---- the kind: one child, no options.

namespace {

constexpr route_stat kOnlyGetsStats[] = {
    {"only_gets_refused", "only_gets: requests other than reads answered as null would (sent nowhere)."},
};

constexpr config::child_slot kOnlyGetsSlots[] = {
    {"child", "child", nullptr, false, 1},
};

const route* build_only_gets(tree_builder& b, const config::route_config& r) {
  const route* child = b.child(r, "child", false);
  if (child == nullptr) return nullptr;
  return b.add<only_gets_route>(b.name_of(r), *child);
}

constexpr config::route_kind_info kOnlyGetsInfo{
    "only_gets",
    nullptr,
    "reads go to the child; every other request is answered as null would (mcrouter's --allow-only-gets)",
    kOnlyGetsSlots,
    {},
    [](config::route_format) { return std::make_shared<config::route_options>(); },
};

}  // namespace

extern constinit const kind_module kOnlyGetsKind{kOnlyGetsInfo, build_only_gets, kOnlyGetsStats};

}  // namespace ithaca::route
