// hash_key: the 64-bit key hash that picks a bucket. Seeded per store at start-up so clients
// cannot aim many keys at one bucket (and one bucket lock).
//
// Every request hashes its key twice (the pipeline lookahead's prefetch, then the lookup), so
// this sits on the hot path of every row. Shape: whole-word loads only (a key of up to 16 bytes
// is read as two possibly overlapping words, never byte by byte: the old tail copy through the
// stack stalled on store forwarding and cost a third of the function), and each 64-bit multiply
// folds its 128-bit product (high ^ low) so one multiply mixes all input bits.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace ithaca::store {

inline uint64_t fold_mul(uint64_t a, uint64_t b) noexcept {
  const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

inline uint64_t load_u64(const char* p) noexcept {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

inline uint64_t load_u32(const char* p) noexcept {
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

inline uint64_t hash_key(std::string_view key, uint64_t seed) noexcept {
  constexpr uint64_t kOdd1 = 0x9e3779b97f4a7c15ULL;
  constexpr uint64_t kOdd2 = 0xd6e8feb86659fd93ULL;
  constexpr uint64_t kOdd3 = 0xa0761d6478bd642fULL;
  const char* p = key.data();
  const size_t n = key.size();
  uint64_t s = seed ^ kOdd3;
  uint64_t a = 0;
  uint64_t b = 0;
  if (n > 16) {
    size_t left = n;
    while (left > 16) {
      s = fold_mul(load_u64(p) ^ kOdd1, load_u64(p + 8) ^ s);
      p += 16;
      left -= 16;
    }
    // The last 16 bytes, overlapping what the loop took (n > 16, so this stays inside the key).
    a = load_u64(p + left - 16);
    b = load_u64(p + left - 8);
  } else if (n >= 8) {
    a = load_u64(p);
    b = load_u64(p + n - 8);
  } else if (n >= 4) {
    a = load_u32(p);
    b = load_u32(p + n - 4);
  } else if (n > 0) {
    const auto byte = [&](size_t i) { return uint64_t{static_cast<unsigned char>(p[i])}; };
    a = (byte(0) << 16) | (byte(n >> 1) << 8) | byte(n - 1);
  }
  return fold_mul(kOdd1 ^ n, fold_mul(a ^ kOdd2 ^ seed, b ^ s));
}

}  // namespace ithaca::store
