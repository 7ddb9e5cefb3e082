// Bob Jenkins' one-at-a-time hash; key bytes sign-extended as twemproxy does.
#include "hash/hash_functions.h"

namespace ithaca::proxy {

std::uint32_t hash_one_at_a_time(std::string_view key) {
  std::uint32_t h = 0;
  for (char c : key) {
    h += signed_byte(c);
    h += h << 10;
    h ^= h >> 6;
  }
  h += h << 3;
  h ^= h >> 11;
  h += h << 15;
  return h;
}

}  // namespace ithaca::proxy
