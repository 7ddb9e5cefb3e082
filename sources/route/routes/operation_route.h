// The `operation` route (mcrouter's OperationSelectorRoute): a child per
// operation class (get, set, delete, arithmetic, touch; protocol::op_class),
// the default for a class without one and for the rest (flush_all, me).
#pragma once

#include <array>

#include "command_class.h"
#include "selector_route.h"

namespace ithaca::route {

class operation_route final : public selector_route {
 public:
  static constexpr std::size_t kClasses = 5;
  // `by_class[c]`: the child for class c, or null for the default.
  operation_route(std::string name, const std::array<const route*, kClasses>& by_class, const route& fallback);
  const char* kind() const override { return "operation"; }

 protected:
  std::size_t pick(const protocol::request& req, std::string_view key) const override;

 private:
  std::array<std::size_t, kClasses + 1> target_of_{};  // by op_class (None last)
};

}  // namespace ithaca::route
