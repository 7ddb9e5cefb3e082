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
  // `salt`: appended to each key before it is hashed (mcrouter's salt:
  // "HashRoute|salt=1" places keys apart from the same route unsalted).
  hash_route(std::string name, std::vector<const route*> targets, std::unique_ptr<proxy::distribution> dist,
             std::string hash_name, std::string salt = {});
  const char* kind() const override { return "hash"; }
  // mcrouter's SelectionRoute over a HashSelector: "selection|hash|Ch3".
  std::string handle_name() const override {
    return "selection|hash|" + hash_name_ + (salt_.empty() ? "" : "|salt=" + salt_);
  }

 protected:
  std::size_t pick(const protocol::request& req, std::string_view key) const override;

 private:
  std::unique_ptr<proxy::distribution> dist_;
  std::string hash_name_;
  std::string salt_;
};

}  // namespace ithaca::route
