// Bob Jenkins' SpookyHash V2 (public domain; folly's SpookyHashV2 is the copy
// mcrouter links), as far as mcrouter's WeightedCh3 needs it: the one-call
// 128-bit hash and its 32-bit form. Messages under 192 bytes take the short
// path (4 lanes, 32 bytes a round); longer ones the 12-lane path in 96-byte
// blocks with a length byte in the last, zero-padded block. Words are read
// little-endian, as on the hosts mcrouter runs on.
#include <cstring>

#include "hash/hash_functions.h"

namespace ithaca::proxy {

namespace {

constexpr std::uint64_t kSpookyConst = 0xdeadbeefdeadbeefull;
constexpr std::size_t kLanes = 12;
constexpr std::size_t kBlock = kLanes * 8;  // 96 bytes
constexpr std::size_t kShortLimit = 2 * kBlock;

std::uint64_t rot(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

std::uint64_t word_at(const unsigned char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

void short_mix(std::uint64_t& h0, std::uint64_t& h1, std::uint64_t& h2, std::uint64_t& h3) {
  static constexpr int kRot[12] = {50, 52, 30, 41, 54, 48, 38, 37, 62, 34, 5, 36};
  std::uint64_t* h[4] = {&h0, &h1, &h2, &h3};
  // Round i: lane (i + 2) % 4 is rotated, gets the next lane added, and is
  // xored into lane i % 4.
  for (int i = 0; i < 12; ++i) {
    std::uint64_t& x = *h[(i + 2) % 4];
    x = rot(x, kRot[i]);
    x += *h[(i + 3) % 4];
    *h[i % 4] ^= x;
  }
}

void short_end(std::uint64_t& h0, std::uint64_t& h1, std::uint64_t& h2, std::uint64_t& h3) {
  static constexpr int kRot[11] = {15, 52, 26, 51, 28, 9, 47, 54, 32, 25, 63};
  std::uint64_t* h[4] = {&h0, &h1, &h2, &h3};
  // Round i: lane (i + 3) % 4 ^= lane (i + 2) % 4, which is rotated and
  // added back.
  for (int i = 0; i < 11; ++i) {
    std::uint64_t& x = *h[(i + 2) % 4];
    std::uint64_t& y = *h[(i + 3) % 4];
    y ^= x;
    x = rot(x, kRot[i]);
    y += x;
  }
}

void spooky_short(const unsigned char* p, std::size_t length, std::uint64_t& hash1, std::uint64_t& hash2) {
  std::size_t remainder = length % 32;
  std::uint64_t a = hash1, b = hash2, c = kSpookyConst, d = kSpookyConst;
  if (length > 15) {
    const unsigned char* end = p + (length / 32) * 32;
    for (; p < end; p += 32) {
      c += word_at(p);
      d += word_at(p + 8);
      short_mix(a, b, c, d);
      a += word_at(p + 16);
      b += word_at(p + 24);
    }
    if (remainder >= 16) {
      c += word_at(p);
      d += word_at(p + 8);
      short_mix(a, b, c, d);
      p += 16;
      remainder -= 16;
    }
  }
  d += std::uint64_t{length} << 56;
  if (remainder == 0) {
    c += kSpookyConst;
    d += kSpookyConst;
  } else {
    // The last 0..15 bytes: little-endian into c (bytes 0..7) and d (8..14).
    std::uint64_t lo = 0, hi = 0;
    for (std::size_t i = 0; i < remainder; ++i) {
      if (i < 8)
        lo |= std::uint64_t{p[i]} << (8 * i);
      else
        hi |= std::uint64_t{p[i]} << (8 * (i - 8));
    }
    c += lo;
    d += hi;
  }
  short_end(a, b, c, d);
  hash1 = a;
  hash2 = b;
}

void mix(const unsigned char* data, std::uint64_t* s) {
  static constexpr int kRot[kLanes] = {11, 32, 43, 31, 17, 28, 39, 57, 55, 54, 22, 46};
  for (std::size_t i = 0; i < kLanes; ++i) {
    s[i] += word_at(data + 8 * i);
    s[(i + 2) % kLanes] ^= s[(i + 10) % kLanes];
    s[(i + 11) % kLanes] ^= s[i];
    s[i] = rot(s[i], kRot[i]);
    s[(i + 11) % kLanes] += s[(i + 1) % kLanes];
  }
}

void end_partial(std::uint64_t* h) {
  static constexpr int kRot[kLanes] = {44, 15, 34, 21, 38, 33, 10, 13, 38, 53, 42, 54};
  for (std::size_t i = 0; i < kLanes; ++i) {
    h[(i + 11) % kLanes] += h[(i + 1) % kLanes];
    h[(i + 2) % kLanes] ^= h[(i + 11) % kLanes];
    h[(i + 1) % kLanes] = rot(h[(i + 1) % kLanes], kRot[i]);
  }
}

}  // namespace

void spooky_v2_hash128(std::string_view message, std::uint64_t& hash1, std::uint64_t& hash2) {
  const auto* p = reinterpret_cast<const unsigned char*>(message.data());
  const std::size_t length = message.size();
  if (length < kShortLimit) {
    spooky_short(p, length, hash1, hash2);
    return;
  }
  std::uint64_t h[kLanes];
  for (std::size_t i = 0; i < kLanes; i += 3) {
    h[i] = hash1;
    h[i + 1] = hash2;
    h[i + 2] = kSpookyConst;
  }
  const std::size_t whole = length / kBlock * kBlock;
  for (std::size_t off = 0; off < whole; off += kBlock) mix(p + off, h);
  unsigned char last[kBlock] = {};
  const std::size_t remainder = length - whole;
  std::memcpy(last, p + whole, remainder);
  last[kBlock - 1] = static_cast<unsigned char>(remainder);
  for (std::size_t i = 0; i < kLanes; ++i) h[i] += word_at(last + 8 * i);
  end_partial(h);
  end_partial(h);
  end_partial(h);
  hash1 = h[0];
  hash2 = h[1];
}

std::uint32_t spooky_v2_hash32(std::string_view message, std::uint32_t seed) {
  std::uint64_t h1 = seed, h2 = seed;
  spooky_v2_hash128(message, h1, h2);
  return static_cast<std::uint32_t>(h1);
}

}  // namespace ithaca::proxy
