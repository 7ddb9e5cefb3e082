#include "md5.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace ithaca::server {

namespace {

// Per round, the left rotations of its four steps (RFC 1321, 3.4).
constexpr std::array<unsigned, 16> kShift = {7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21};

// T[i] = floor(2^32 * |sin(i + 1)|) (RFC 1321, 3.4); a double's sine is exact enough
// for all 64 (they are the RFC's table).
const std::array<uint32_t, 64>& sine_table() {
  static const std::array<uint32_t, 64> t = [] {
    std::array<uint32_t, 64> v{};
    for (int i = 0; i < 64; ++i) v[i] = static_cast<uint32_t>(std::floor(std::fabs(std::sin(i + 1.0)) * 4294967296.0));
    return v;
  }();
  return t;
}

uint32_t load_le32(const unsigned char* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

void block(std::array<uint32_t, 4>& h, const unsigned char* p) {
  const auto& t = sine_table();
  uint32_t m[16];
  for (int i = 0; i < 16; ++i) m[i] = load_le32(p + 4 * i);
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
  for (unsigned i = 0; i < 64; ++i) {
    uint32_t f;
    unsigned g;
    switch (i / 16) {
      case 0: f = (b & c) | (~b & d); g = i; break;
      case 1: f = (d & b) | (~d & c); g = (5 * i + 1) % 16; break;
      case 2: f = b ^ c ^ d; g = (3 * i + 5) % 16; break;
      default: f = c ^ (b | ~d); g = (7 * i) % 16; break;
    }
    const uint32_t next = b + std::rotl(a + f + t[i] + m[g], static_cast<int>(kShift[(i / 16) * 4 + i % 4]));
    a = d;
    d = c;
    c = b;
    b = next;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
}

}  // namespace

std::string md5_hex(std::string_view text) {
  std::array<uint32_t, 4> h = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t left = text.size();
  for (; left >= 64; left -= 64, p += 64) block(h, p);
  // The tail, a 1 bit, zeros to 56 mod 64, the length in bits (little-endian).
  unsigned char tail[128] = {};
  std::memcpy(tail, p, left);
  tail[left] = 0x80;
  const size_t n = left < 56 ? 64 : 128;
  const uint64_t bits = static_cast<uint64_t>(text.size()) * 8;
  for (int i = 0; i < 8; ++i) tail[n - 8 + i] = static_cast<unsigned char>(bits >> (8 * i));
  for (size_t off = 0; off < n; off += 64) block(h, tail + off);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(32);
  for (uint32_t w : h) {
    for (int i = 0; i < 4; ++i) {
      const unsigned byte = (w >> (8 * i)) & 0xff;
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0x0f]);
    }
  }
  return out;
}

}  // namespace ithaca::server
