#include "prefix_route.h"

#include <algorithm>
#include <functional>

namespace ithaca::route {

namespace {

std::vector<const route*> targets_of(const std::vector<std::pair<std::string, const route*>>& by_prefix,
                                     const route& fallback) {
  std::vector<const route*> t;
  for (const auto& [prefix, r] : by_prefix) t.push_back(r);
  t.push_back(&fallback);
  return t;
}

}  // namespace

prefix_route::prefix_route(std::string name, std::vector<std::pair<std::string, const route*>> by_prefix,
                           const route& fallback)
    : selector_route(std::move(name), targets_of(by_prefix, fallback), true), fallback_(by_prefix.size()) {
  for (std::size_t i = 0; i < by_prefix.size(); ++i) {
    index_.emplace(by_prefix[i].first, i);
    lengths_.push_back(by_prefix[i].first.size());
  }
  std::sort(lengths_.begin(), lengths_.end(), std::greater<>());
  lengths_.erase(std::unique(lengths_.begin(), lengths_.end()), lengths_.end());
}

std::size_t prefix_route::pick(const protocol::request&, std::string_view key) const {
  for (const std::size_t len : lengths_) {
    if (len > key.size()) continue;
    auto it = index_.find(key.substr(0, len));
    if (it != index_.end()) return it->second;
  }
  return fallback_;
}

}  // namespace ithaca::route
