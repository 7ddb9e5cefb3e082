#include "operation_route.h"

namespace ithaca::route {

namespace {

std::vector<const route*> targets_of(const std::array<const route*, operation_route::kClasses>& by_class,
                                     const route& fallback) {
  std::vector<const route*> t{&fallback};
  for (const route* r : by_class) {
    if (r != nullptr) t.push_back(r);
  }
  return t;
}

}  // namespace

operation_route::operation_route(std::string name, const std::array<const route*, kClasses>& by_class,
                                 const route& fallback)
    : selector_route(std::move(name), targets_of(by_class, fallback), false) {
  std::size_t next = 1;
  for (std::size_t c = 0; c < kClasses; ++c) target_of_[c] = by_class[c] != nullptr ? next++ : 0;
  target_of_[kClasses] = 0;
}

std::size_t operation_route::pick(const protocol::request& req, std::string_view) const {
  return target_of_[static_cast<std::size_t>(protocol::operation_of(req))];
}

}  // namespace ithaca::route
