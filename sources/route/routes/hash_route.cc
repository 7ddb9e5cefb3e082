#include "hash_route.h"

#include <random>

namespace ithaca::route {

hash_route::hash_route(std::string name, std::vector<const route*> targets, std::unique_ptr<proxy::distribution> dist)
    : selector_route(std::move(name), std::move(targets), true), dist_(std::move(dist)) {}

std::size_t hash_route::pick(const protocol::request&, std::string_view key) const { return dist_->locate(key); }

random_route::random_route(std::string name, std::vector<const route*> targets)
    : selector_route(std::move(name), std::move(targets), false) {}

std::size_t random_route::pick(const protocol::request&, std::string_view) const {
  thread_local std::minstd_rand rng{std::random_device{}()};
  return std::uniform_int_distribution<std::size_t>(0, targets().size() - 1)(rng);
}

}  // namespace ithaca::route
