#include "route_tree.h"

#include <string_view>
#include <unordered_set>

#include "local_route.h"
#include "routes/ack_route.h"
#include "routes/closed_route.h"

namespace ithaca::route {

route_tree::route_tree(std::vector<std::unique_ptr<const route>> routes, const route* root,
                       std::vector<std::shared_ptr<const proxy::pool>> pools, std::vector<const route*> listener_roots)
    : routes_(std::move(routes)), pools_(std::move(pools)) {
  roots_.push_back(entry_of(root));
  for (const route* r : listener_roots) roots_.push_back(entry_of(r));
}

route_tree::root_entry route_tree::entry_of(const route* r) {
  const bool local = is_local(r);
  return root_entry{r, local, !local || dynamic_cast<const ack_route*>(r) != nullptr, local || reaches_store(r)};
}

// A walk of the tree through children(), each node once.
bool route_tree::reaches_store(const route* root) {
  std::vector<const route*> todo{root};
  std::unordered_set<const route*> seen;
  while (!todo.empty()) {
    const route* r = todo.back();
    todo.pop_back();
    if (!seen.insert(r).second) continue;
    const std::string_view kind = r->kind();
    if (is_local(r) || kind == "local" || kind == "l1l2") return true;
    for (const route* c : r->children()) todo.push_back(c);
  }
  return false;
}

std::shared_ptr<const route_tree> route_tree::rebase(std::shared_ptr<const route_tree> fresh,
                                                     std::shared_ptr<const route_tree> previous) {
  std::shared_ptr<route_tree> t(new route_tree());
  t->roots_.push_back(fresh->roots_.front());
  t->roots_.insert(t->roots_.end(), previous->roots_.begin() + 1, previous->roots_.end());
  t->pools_ = fresh->pools_;
  t->listener_owner_ = previous->listener_owner_ ? previous->listener_owner_ : previous;
  t->default_owner_ = std::move(fresh);
  return t;
}

const route& route_tree::root(std::size_t i) const {
  if (i < roots_.size()) return *roots_[i].root;
  static const closed_route kClosed;
  return kClosed;
}

// The local route, or the local route behind the ack gate (its writes wait
// for a slave, but every request runs on this store, with its side effects).
bool route_tree::is_local(const route* r) {
  if (const auto* ack = dynamic_cast<const ack_route*>(r)) r = &ack->child();
  return dynamic_cast<const local_route*>(r) != nullptr;
}

std::vector<const route*> route_tree::nodes() const {
  std::vector<const route*> out;
  if (default_owner_ == nullptr) {
    for (const auto& r : routes_) out.push_back(r.get());
    return out;
  }
  out = default_owner_->nodes();
  const auto reached = first_roots();
  for (const route* r : listener_owner_->nodes()) {
    auto it = reached.find(r);
    if (it != reached.end() && it->second > 0) out.push_back(r);
  }
  return out;
}

std::unordered_map<const route*, std::size_t> route_tree::first_roots() const {
  std::unordered_map<const route*, std::size_t> out;
  std::vector<const route*> stack;
  for (std::size_t i = 0; i < roots_.size(); ++i) {
    stack.push_back(roots_[i].root);
    while (!stack.empty()) {
      const route* r = stack.back();
      stack.pop_back();
      if (!out.emplace(r, i).second) continue;
      for (const route* c : r->children()) stack.push_back(c);
    }
  }
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
