#include "jsonm_hash.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace ithaca::config::jsonm {

namespace {

constexpr uint64_t kSpookyConst = 0xdeadbeefdeadbeefULL;
constexpr size_t kSpookyVars = 12;
constexpr size_t kSpookyBlock = kSpookyVars * 8;    // 96
constexpr size_t kSpookyBuffer = 2 * kSpookyBlock;  // 192: below it, the short hash

inline uint64_t spooky_rot(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

inline uint64_t spooky_load64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint64_t spooky_load32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void spooky_short_mix(uint64_t& h0, uint64_t& h1, uint64_t& h2, uint64_t& h3) {
  h2 = spooky_rot(h2, 50), h2 += h3, h0 ^= h2;
  h3 = spooky_rot(h3, 52), h3 += h0, h1 ^= h3;
  h0 = spooky_rot(h0, 30), h0 += h1, h2 ^= h0;
  h1 = spooky_rot(h1, 41), h1 += h2, h3 ^= h1;
  h2 = spooky_rot(h2, 54), h2 += h3, h0 ^= h2;
  h3 = spooky_rot(h3, 48), h3 += h0, h1 ^= h3;
  h0 = spooky_rot(h0, 38), h0 += h1, h2 ^= h0;
  h1 = spooky_rot(h1, 37), h1 += h2, h3 ^= h1;
  h2 = spooky_rot(h2, 62), h2 += h3, h0 ^= h2;
  h3 = spooky_rot(h3, 34), h3 += h0, h1 ^= h3;
  h0 = spooky_rot(h0, 5), h0 += h1, h2 ^= h0;
  h1 = spooky_rot(h1, 36), h1 += h2, h3 ^= h1;
}

void spooky_short_end(uint64_t& h0, uint64_t& h1, uint64_t& h2, uint64_t& h3) {
  h3 ^= h2, h2 = spooky_rot(h2, 15), h3 += h2;
  h0 ^= h3, h3 = spooky_rot(h3, 52), h0 += h3;
  h1 ^= h0, h0 = spooky_rot(h0, 26), h1 += h0;
  h2 ^= h1, h1 = spooky_rot(h1, 51), h2 += h1;
  h3 ^= h2, h2 = spooky_rot(h2, 28), h3 += h2;
  h0 ^= h3, h3 = spooky_rot(h3, 9), h0 += h3;
  h1 ^= h0, h0 = spooky_rot(h0, 47), h1 += h0;
  h2 ^= h1, h1 = spooky_rot(h1, 54), h2 += h1;
  h3 ^= h2, h2 = spooky_rot(h2, 32), h3 += h2;
  h0 ^= h3, h3 = spooky_rot(h3, 25), h0 += h3;
  h1 ^= h0, h0 = spooky_rot(h0, 63), h1 += h0;
}

// Messages under 192 bytes: 32 bytes a round, then the tail and the length.
uint64_t spooky_short(const unsigned char* p, size_t length, uint64_t seed) {
  uint64_t a = seed, b = seed, c = kSpookyConst, d = kSpookyConst;
  size_t remainder = length % 32;
  if (length > 15) {
    const unsigned char* end = p + (length / 32) * 32;
    for (; p < end; p += 32) {
      c += spooky_load64(p);
      d += spooky_load64(p + 8);
      spooky_short_mix(a, b, c, d);
      a += spooky_load64(p + 16);
      b += spooky_load64(p + 24);
    }
    if (remainder >= 16) {
      c += spooky_load64(p);
      d += spooky_load64(p + 8);
      spooky_short_mix(a, b, c, d);
      p += 16;
      remainder -= 16;
    }
  }
  d += static_cast<uint64_t>(length) << 56;
  switch (remainder) {
    case 15: d += static_cast<uint64_t>(p[14]) << 48; [[fallthrough]];
    case 14: d += static_cast<uint64_t>(p[13]) << 40; [[fallthrough]];
    case 13: d += static_cast<uint64_t>(p[12]) << 32; [[fallthrough]];
    case 12:
      d += spooky_load32(p + 8);
      c += spooky_load64(p);
      break;
    case 11: d += static_cast<uint64_t>(p[10]) << 16; [[fallthrough]];
    case 10: d += static_cast<uint64_t>(p[9]) << 8; [[fallthrough]];
    case 9: d += static_cast<uint64_t>(p[8]); [[fallthrough]];
    case 8: c += spooky_load64(p); break;
    case 7: c += static_cast<uint64_t>(p[6]) << 48; [[fallthrough]];
    case 6: c += static_cast<uint64_t>(p[5]) << 40; [[fallthrough]];
    case 5: c += static_cast<uint64_t>(p[4]) << 32; [[fallthrough]];
    case 4: c += spooky_load32(p); break;
    case 3: c += static_cast<uint64_t>(p[2]) << 16; [[fallthrough]];
    case 2: c += static_cast<uint64_t>(p[1]) << 8; [[fallthrough]];
    case 1: c += static_cast<uint64_t>(p[0]); break;
    case 0:
      c += kSpookyConst;
      d += kSpookyConst;
      break;
  }
  spooky_short_end(a, b, c, d);
  return a;
}

void spooky_mix(const uint64_t* data, uint64_t* s) {
  // {rotation} per step, the state indexes follow a fixed pattern.
  static constexpr int kRot[kSpookyVars] = {11, 32, 43, 31, 17, 28, 39, 57, 55, 54, 22, 46};
  for (size_t k = 0; k < kSpookyVars; ++k) {
    s[k] += data[k];
    s[(k + 2) % kSpookyVars] ^= s[(k + 10) % kSpookyVars];
    s[(k + 11) % kSpookyVars] ^= s[k];
    s[k] = spooky_rot(s[k], kRot[k]);
    s[(k + 11) % kSpookyVars] += s[(k + 1) % kSpookyVars];
  }
}

void spooky_end_partial(uint64_t* h) {
  static constexpr int kRot[kSpookyVars] = {44, 15, 34, 21, 38, 33, 10, 13, 38, 53, 42, 54};
  for (size_t k = 0; k < kSpookyVars; ++k) {
    h[(k + 11) % kSpookyVars] += h[(k + 1) % kSpookyVars];
    h[(k + 2) % kSpookyVars] ^= h[(k + 11) % kSpookyVars];
    h[(k + 1) % kSpookyVars] = spooky_rot(h[(k + 1) % kSpookyVars], kRot[k]);
  }
}

}  // namespace

uint64_t spooky_hash64(std::string_view data, uint64_t seed) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const size_t length = data.size();
  if (length < kSpookyBuffer) return spooky_short(p, length, seed);
  uint64_t h[kSpookyVars];
  for (size_t k = 0; k < kSpookyVars; k += 3) {
    h[k] = seed;
    h[k + 1] = seed;
    h[k + 2] = kSpookyConst;
  }
  uint64_t block[kSpookyVars];
  const size_t whole = length / kSpookyBlock * kSpookyBlock;
  for (size_t off = 0; off < whole; off += kSpookyBlock) {
    std::memcpy(block, p + off, kSpookyBlock);
    spooky_mix(block, h);
  }
  const size_t remainder = length - whole;
  unsigned char last[kSpookyBlock] = {};
  std::memcpy(last, p + whole, remainder);
  last[kSpookyBlock - 1] = static_cast<unsigned char>(remainder);
  std::memcpy(block, last, kSpookyBlock);
  for (size_t k = 0; k < kSpookyVars; ++k) h[k] += block[k];
  spooky_end_partial(h);
  spooky_end_partial(h);
  spooky_end_partial(h);
  return h[0];
}

uint64_t twang_mix64(uint64_t key) {
  key = (~key) + (key << 21);
  key = key ^ (key >> 24);
  key = key + (key << 3) + (key << 8);
  key = key ^ (key >> 14);
  key = key + (key << 2) + (key << 4);
  key = key ^ (key >> 28);
  key = key + (key << 31);
  return key;
}

uint64_t fnv64_broken(std::string_view data) {
  uint64_t hash = 14695981039346656037ULL;
  for (const char c : data) {
    hash += (hash << 1) + (hash << 4) + (hash << 5) + (hash << 7) + (hash << 8) + (hash << 40);
    hash ^= static_cast<uint64_t>(static_cast<int64_t>(static_cast<signed char>(c)));
  }
  return hash;
}

size_t rendezvous_pick(const std::vector<std::pair<std::string_view, double>>& choices, uint64_t key) {
  double sum = 0;
  for (const auto& c : choices) {
    if (c.second < 0) throw std::invalid_argument("Weight should be greater than 0");
    sum += c.second;
  }
  if (sum < std::numeric_limits<double>::epsilon()) throw std::invalid_argument("Sum of weights is 0");
  double best = -1.0;
  size_t best_id = 0;
  for (size_t k = 0; k < choices.size(); ++k) {
    const double weight = choices[k].second / sum;
    const double combined = static_cast<double>(twang_mix64(fnv64_broken(choices[k].first) + key));
    const double scaled = combined / static_cast<double>(std::numeric_limits<uint64_t>::max());
    const double score = weight > std::numeric_limits<double>::epsilon() ? std::pow(scaled, 1.0 / weight) : 0.0;
    if (score > best) {
      best = score;
      best_id = k;
    }
  }
  return best_id;
}

}  // namespace ithaca::config::jsonm
