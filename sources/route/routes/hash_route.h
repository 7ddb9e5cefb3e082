// The `hash` route (mcrouter's HashRoute): a child by the key's hash, placed
// as a pool places servers (hash and distribution; ch3 by default, as
// mcrouter; also its Crc32, WeightedCh3 with `weights` and ConstShard). In
// an mcrouter config it hashes the key up to its hash stop "|#|", as
// mcrouter's routing key. A multi-key get whose keys hash to different
// children is split (selector_route.h). mcrouter's PoolRoute over a pool
// with route objects among its servers is one of these over the pool's
// destinations (config/mcrouter_routes.cc).
#pragma once

#include <memory>
#include <string>

#include "distribution/distribution.h"
#include "key_hash_part.h"
#include "selector_route.h"

namespace ithaca::route {

class hash_route final : public selector_route {
 public:
  // `hash_name`: mcrouter's name of the hash function (Ch3, Crc32), else
  // ithaca's distribution's, for introspection.
  // `salt`: appended to each key before it is hashed (mcrouter's salt:
  // "HashRoute|salt=1" places keys apart from the same route unsalted).
  // `hash_stop`: only the part before "|#|" is hashed (mcrouter's routing key).
  hash_route(std::string name, std::vector<const route*> targets, std::unique_ptr<proxy::distribution> dist,
             std::string hash_name, std::string salt = {}, bool hash_stop = false);
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
  proxy::key_hash_options hash_options_;
};

}  // namespace ithaca::route
