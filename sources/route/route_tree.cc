#include "route_tree.h"

#include "local_route.h"

namespace ithaca::route {

route_tree::route_tree(std::vector<std::unique_ptr<const route>> routes, const route* root)
    : routes_(std::move(routes)), root_(root), root_is_local_(dynamic_cast<const local_route*>(root) != nullptr) {}

std::shared_ptr<const route_tree> route_tree::local_only() {
  std::vector<std::unique_ptr<const route>> routes;
  routes.push_back(std::make_unique<local_route>());
  const route* root = routes.back().get();
  return std::make_shared<const route_tree>(std::move(routes), root);
}

}  // namespace ithaca::route
