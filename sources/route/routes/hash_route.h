// The `hash` route (mcrouter's HashRoute): a child by the key's hash, placed
// as a pool places servers (hash and distribution; ch3 by default, as
// mcrouter). A multi-key get whose keys hash to different children is split
// (selector_route.h).
#pragma once

#include <memory>
#include <string>

#include "distribution/distribution.h"
#include "selector_route.h"

namespace ithaca::route {

class hash_route final : public selector_route {
 public:
  // `hash_name`: mcrouter's name of the hash function (Ch3, Crc32), else
  // ithaca's distribution's, for introspection.
  hash_route(std::string name, std::vector<const route*> targets, std::unique_ptr<proxy::distribution> dist,
             std::string hash_name);
  const char* kind() const override { return "hash"; }
  // mcrouter's SelectionRoute over a HashSelector: "selection|hash|Ch3".
  std::string handle_name() const override { return "selection|hash|" + hash_name_; }

 protected:
  std::size_t pick(const protocol::request& req, std::string_view key) const override;

 private:
  std::unique_ptr<proxy::distribution> dist_;
  std::string hash_name_;
};

}  // namespace ithaca::route
