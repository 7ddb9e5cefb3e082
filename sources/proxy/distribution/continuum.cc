#include "distribution/continuum.h"

#include <algorithm>

#include "hash/hash_functions.h"

namespace ithaca::proxy {

void continuum::add_md5_points(std::string_view name, std::uint32_t server) {
  const md5_digest_t digest = md5_digest(name);
  for (unsigned word = 0; word < 4; ++word) points_.push_back({md5_word(digest, word), server});
}

void continuum::seal() {
  std::sort(points_.begin(), points_.end(), [](const point& a, const point& b) {
    return a.value != b.value ? a.value < b.value : a.server < b.server;
  });
}

std::uint32_t continuum::find(std::uint32_t hash) const {
  auto it = std::lower_bound(points_.begin(), points_.end(), hash,
                             [](const point& p, std::uint32_t h) { return p.value < h; });
  if (it == points_.end()) it = points_.begin();
  return it->server;
}

}  // namespace ithaca::proxy
