// The `hash` route (mcrouter's HashRoute): a child by the key's hash, placed
// as a pool places servers (hash and distribution; ch3 by default, as
// mcrouter). A multi-key get whose keys hash to different children is split
// (selector_route.h).
#pragma once

#include <memory>

#include "distribution/distribution.h"
#include "selector_route.h"

namespace ithaca::route {

class hash_route final : public selector_route {
 public:
  hash_route(std::string name, std::vector<const route*> targets, std::unique_ptr<proxy::distribution> dist);
  const char* kind() const override { return "hash"; }

 protected:
  std::size_t pick(const protocol::request& req, std::string_view key) const override;

 private:
  std::unique_ptr<proxy::distribution> dist_;
};

}  // namespace ithaca::route
