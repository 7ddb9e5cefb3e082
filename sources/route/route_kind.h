// A route kind as one module (route/routes/KIND_route.cc): its runtime
// route, its options and how both config formats spell them
// (config::route_kind_info, read by config/route_kind_reader.h), its build
// function and the counters it adds to `stats routes`. The registry
// (route_kinds.cc) lists every module; route_builder.cc and the two config
// readers iterate it and know no kind. Adding a kind: one file under
// routes/, one line in route_kinds.cc, its tests.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pool.h"
#include "route.h"
#include "route_kind_info.h"
#include "router_config.h"

namespace ithaca::route {

// What a kind's build function may use while the tree is built [the thread
// building the tree: main at start-up, the pooler at a reload]. Every route
// it makes is owned by the tree; a failure records the node's line and the
// build function returns null.
class tree_builder {
 public:
  // The built route of the only child of `r` in `role` (none or several: an
  // error). With `result`, the child must answer into slot.result (not the
  // local store, which renders its reply itself): a composite looks at it.
  virtual const route* child(const config::route_config& r, std::string_view role, bool result) = 0;
  // The built children of `r` in `role`, in order; at least `min` of them.
  virtual bool children(const config::route_config& r, std::string_view role, bool result, std::size_t min,
                        std::vector<const route*>& out) = 0;
  // Records "line N: KIND route: why" (the first failure wins); returns null.
  virtual const route* fail(const config::route_config& r, std::string why) = 0;
  // Hands a made route to the tree.
  virtual const route* keep(std::unique_ptr<const route> made) = 0;
  // The route of any node, built as the tree's nodes are: a node the config
  // does not write (a selector's implicit fallback, config::module_node).
  virtual const route* build(const config::route_config& n) = 0;
  // The local store, behind the ack gate on a master with `ack: slave`.
  virtual const route* local_store() = 0;
  // The pool named `name` under `pools:`; null if there is none.
  virtual std::shared_ptr<const proxy::pool> pool(const std::string& name) = 0;
  // Every pool of the config, by name (in the mcrouter dialect, those its
  // routes use: its reader keeps no other, as mcrouter's ProxyConfig).
  virtual std::vector<std::shared_ptr<const proxy::pool>> all_pools() = 0;
  // router.default_route (mcrouter's --route-prefix): the routing prefix of
  // keys that carry none; "" when not given. And whether a prefix no route
  // has goes there (--send-invalid-route-to-default).
  virtual std::string default_route() = 0;
  virtual bool send_invalid_route_to_default() = 0;

  template <class R, class... Args>
  const route* add(Args&&... args) {
    return keep(std::make_unique<R>(std::forward<Args>(args)...));
  }
  // The node's name, or its kind's when it has none.
  static std::string name_of(const config::route_config& r);

 protected:
  ~tree_builder() = default;
};

// A counter a kind's routes keep, shown as `stats routes`' route:N:FIELD
// (once not zero) and on the metrics page as ithaca_route_FIELD_total.
struct route_stat {
  const char* field;
  const char* help;  // the metric's HELP line
};

struct kind_module {
  const config::route_kind_info& config;
  const route* (*build)(tree_builder& b, const config::route_config& r);
  std::span<const route_stat> stats = {};
};

// Every kind module, in the order the README lists them (route_kinds.cc).
std::span<const kind_module* const> route_kinds();
const kind_module* find_route_kind(std::string_view name);
// Registers every kind's config side (config::register_route_kind) [main,
// and a test's main, before any config is read; again is harmless].
void register_route_kinds();

}  // namespace ithaca::route
