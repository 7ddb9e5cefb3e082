// MurmurHash2 (32-bit) with libmemcached's seed, 0xdeadbeef * length, as
// twemproxy has it; words are read little-endian (twemproxy reads them in host
// order on x86-64, which is the same).
#include "hash/hash_functions.h"

namespace ithaca::proxy {

std::uint32_t hash_murmur(std::string_view key) {
  constexpr std::uint32_t m = 0x5bd1e995;
  constexpr int r = 24;
  const auto length = static_cast<std::uint32_t>(key.size());
  std::uint32_t h = (0xdeadbeefu * length) ^ length;

  const auto* p = reinterpret_cast<const std::uint8_t*>(key.data());
  std::size_t left = key.size();
  for (; left >= 4; left -= 4, p += 4) {
    std::uint32_t k =
        std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
    k *= m;
    k ^= k >> r;
    k *= m;
    h *= m;
    h ^= k;
  }
  if (left != 0) {
    if (left == 3) h ^= std::uint32_t(p[2]) << 16;
    if (left >= 2) h ^= std::uint32_t(p[1]) << 8;
    h ^= p[0];
    h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return h;
}

}  // namespace ithaca::proxy
