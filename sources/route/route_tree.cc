#include "route_tree.h"

#include "local_route.h"
#include "routes/ack_route.h"

namespace ithaca::route {

route_tree::route_tree(std::vector<std::unique_ptr<const route>> routes, const route* root,
                       std::vector<std::shared_ptr<const proxy::pool>> pools)
    : routes_(std::move(routes)),
      root_(root),
      pools_(std::move(pools)),
      root_is_local_(is_local(root)),
      root_may_wait_(!root_is_local_ || dynamic_cast<const ack_route*>(root) != nullptr) {}

// The local route, or the local route behind the ack gate (its writes wait
// for a slave, but every request runs on this store, with its side effects).
bool route_tree::is_local(const route* r) {
  if (const auto* ack = dynamic_cast<const ack_route*>(r)) r = &ack->child();
  return dynamic_cast<const local_route*>(r) != nullptr;
}

std::vector<const route*> route_tree::nodes() const {
  std::vector<const route*> out;
  for (const auto& r : routes_) out.push_back(r.get());
  return out;
}

std::vector<std::shared_ptr<proxy::backend_server>> route_tree::servers() const {
  std::vector<std::shared_ptr<proxy::backend_server>> out;
  for (const auto& p : pools_) out.insert(out.end(), p->servers().begin(), p->servers().end());
  return out;
}

std::shared_ptr<const route_tree> route_tree::local_only() {
  std::vector<std::unique_ptr<const route>> routes;
  routes.push_back(std::make_unique<local_route>());
  const route* root = routes.back().get();
  return std::make_shared<const route_tree>(std::move(routes), root);
}

}  // namespace ithaca::route
