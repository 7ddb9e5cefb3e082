// The `random` route (mcrouter's RandomRoute): a child at random per
// request. A multi-key get is split by child (selector_route.h).
#include <random>

#include "route_kind.h"
#include "selector_route.h"

namespace ithaca::route {

namespace {

class random_route final : public selector_route {
 public:
  random_route(std::string name, std::vector<const route*> targets)
      : selector_route(std::move(name), std::move(targets), false) {}
  const char* kind() const override { return "random"; }
  // Any child may be picked: introspection shows them all.
  std::vector<const route*> targets_for(const protocol::request&) const override { return targets(); }

 protected:
  std::size_t pick(const protocol::request&, std::string_view) const override {
    thread_local std::minstd_rand rng{std::random_device{}()};
    return std::uniform_int_distribution<std::size_t>(0, targets().size() - 1)(rng);
  }
};

// ---- the kind: a list of children, no options.

constexpr config::child_slot kRandomSlots[] = {
    {"", "children", "children", true, 1},
};

const route* build_random(tree_builder& b, const config::route_config& r) {
  std::vector<const route*> children;
  if (!b.children(r, "", false, 1, children)) return nullptr;
  return b.add<random_route>(b.name_of(r), std::move(children));
}

constexpr config::route_kind_info kRandomInfo{
    "random",
    "RandomRoute",
    "a child at random",
    kRandomSlots,
    {},
    [](config::route_format) { return std::make_shared<config::route_options>(); },
    config::route_kind_info::collapse::EmptyIsNull,
};

}  // namespace

extern constinit const kind_module kRandomKind{kRandomInfo, build_random};

}  // namespace ithaca::route
