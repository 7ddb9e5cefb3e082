#include "hash_route.h"

namespace ithaca::route {

hash_route::hash_route(std::string name, std::vector<const route*> targets, std::unique_ptr<proxy::distribution> dist)
    : selector_route(std::move(name), std::move(targets), true), dist_(std::move(dist)) {}

std::size_t hash_route::pick(const protocol::request&, std::string_view key) const { return dist_->locate(key); }

}  // namespace ithaca::route
