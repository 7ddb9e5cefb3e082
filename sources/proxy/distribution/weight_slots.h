#pragma once
// Weights laid out as consecutive slots: server 0 owns slots [0, w0), server 1
// [w0, w0 + w1), ... twemproxy's modula continuum written as prefix sums, so a
// weight of a million costs one entry, not a million. Used by modula and jump.

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "distribution/server_spec.h"

namespace ithaca::proxy::detail {

class weight_slots {
 public:
  explicit weight_slots(std::span<const server_spec> servers) {
    ends_.reserve(servers.size());
    std::uint64_t end = 0;
    for (const auto& s : servers) ends_.push_back(end += s.weight);
  }

  std::uint64_t total() const { return ends_.back(); }

  // The server owning `slot` (< total()).
  std::uint32_t server_of(std::uint64_t slot) const {
    return static_cast<std::uint32_t>(std::upper_bound(ends_.begin(), ends_.end(), slot) - ends_.begin());
  }

 private:
  std::vector<std::uint64_t> ends_;  // ends_[i]: one past server i's last slot
};

}  // namespace ithaca::proxy::detail
