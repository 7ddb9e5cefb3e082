// Bob Jenkins' lookup3 `hashlittle` with initval 13, as libmemcached and
// twemproxy use it. twemproxy picks a word, half-word or byte reader by the
// key's alignment; on a little-endian machine all three give the value of the
// byte-wise reader below, which is the only one here.
#include "hash/hash_functions.h"

namespace ithaca::proxy {

namespace {

constexpr std::uint32_t rot(std::uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

void mix(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c) {
  a -= c;
  a ^= rot(c, 4);
  c += b;
  b -= a;
  b ^= rot(a, 6);
  a += c;
  c -= b;
  c ^= rot(b, 8);
  b += a;
  a -= c;
  a ^= rot(c, 16);
  c += b;
  b -= a;
  b ^= rot(a, 19);
  a += c;
  c -= b;
  c ^= rot(b, 4);
  b += a;
}

void final_mix(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c) {
  c ^= b;
  c -= rot(b, 14);
  a ^= c;
  a -= rot(c, 11);
  b ^= a;
  b -= rot(a, 25);
  c ^= b;
  c -= rot(b, 16);
  a ^= c;
  a -= rot(c, 4);
  b ^= a;
  b -= rot(a, 14);
  c ^= b;
  c -= rot(b, 24);
}

// Up to 4 bytes from p as a little-endian word (missing bytes are 0).
std::uint32_t word(const std::uint8_t* p, std::size_t n) {
  std::uint32_t w = 0;
  for (std::size_t i = 0; i < n && i < 4; ++i) w |= std::uint32_t(p[i]) << (8 * i);
  return w;
}

}  // namespace

std::uint32_t hash_jenkins(std::string_view key) {
  constexpr std::uint32_t kInitval = 13;
  std::uint32_t a, b, c;
  a = b = c = 0xdeadbeefu + static_cast<std::uint32_t>(key.size()) + kInitval;

  const auto* k = reinterpret_cast<const std::uint8_t*>(key.data());
  std::size_t length = key.size();
  while (length > 12) {
    a += word(k, 4);
    b += word(k + 4, 4);
    c += word(k + 8, 4);
    mix(a, b, c);
    length -= 12;
    k += 12;
  }
  if (length == 0) return c;  // no final mix for an empty last block
  a += word(k, length);
  if (length > 4) b += word(k + 4, length - 4);
  if (length > 8) c += word(k + 8, length - 8);
  final_mix(a, b, c);
  return c;
}

}  // namespace ithaca::proxy
