// The `prefix` route (mcrouter's PrefixSelectorRoute): the longest of its
// prefixes that starts the key picks the child; a key no prefix starts goes
// to the default (mcrouter's wildcard). A multi-key get whose keys pick
// different children is split (selector_route.h).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "selector_route.h"

namespace ithaca::route {

class prefix_route final : public selector_route {
 public:
  // `by_prefix`: (prefix, child) pairs; `fallback`: keys no prefix starts.
  prefix_route(std::string name, std::vector<std::pair<std::string, const route*>> by_prefix, const route& fallback);
  const char* kind() const override { return "prefix"; }
  // mcrouter prints no line for its PrefixSelectorRoute (RootRoute picks
  // the target itself): the picked route's lines stand at this level.
  void walk_handles(const protocol::request& req, handle_walk& w) const override;

 protected:
  std::size_t pick(const protocol::request& req, std::string_view key) const override;

 private:
  // Looked up longest length first: one hash lookup per distinct length.
  std::vector<std::size_t> lengths_;  // distinct prefix lengths, longest first
  // Looked up by string_view (no std::string made per key and length).
  struct view_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view v) const { return std::hash<std::string_view>{}(v); }
  };
  std::unordered_map<std::string, std::size_t, view_hash, std::equal_to<>> index_;  // prefix -> target
  std::size_t fallback_;
};

}  // namespace ithaca::route
