// Paul Hsieh's SuperFastHash as twemproxy has it: 16-bit pieces are read
// little-endian from unsigned bytes, but the third byte of a 3-byte tail is
// read as a (signed on x86-64) char before the shift, and an empty key hashes
// to 0.
#include "hash/hash_functions.h"

namespace ithaca::proxy {

namespace {
std::uint32_t get16(const char* p) { return unsigned_byte(p[0]) + (unsigned_byte(p[1]) << 8); }
}  // namespace

std::uint32_t hash_hsieh(std::string_view key) {
  if (key.empty()) return 0;
  const char* p = key.data();
  std::uint32_t h = 0;
  for (std::size_t blocks = key.size() / 4; blocks > 0; --blocks, p += 4) {
    h += get16(p);
    const std::uint32_t tmp = (get16(p + 2) << 11) ^ h;
    h = (h << 16) ^ tmp;
    h += h >> 11;
  }
  switch (key.size() % 4) {
    case 3:
      h += get16(p);
      h ^= h << 16;
      h ^= signed_byte(p[2]) << 18;
      h += h >> 11;
      break;
    case 2:
      h += get16(p);
      h ^= h << 11;
      h += h >> 17;
      break;
    case 1:
      h += unsigned_byte(p[0]);
      h ^= h << 10;
      h += h >> 1;
      break;
    default: break;
  }
  // The final avalanche.
  h ^= h << 3;
  h += h >> 5;
  h ^= h << 4;
  h += h >> 17;
  h ^= h << 25;
  h += h >> 6;
  return h;
}

}  // namespace ithaca::proxy
