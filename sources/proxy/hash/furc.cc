// mcrouter's consistent hash, "Ch3" (furc_hash in its fbi/hash.c), and the
// 64-bit MurmurHash2 it draws its bits from: keys land where mcrouter puts
// them, so a pool moved from mcrouter to ithaca moves no key.
//
// How it works: the key's bits come from MurmurHash64A(key, seed) and then
// from rehashing that value again and again (64 bits per hash, cached). For n
// servers, d = the bit length of n - 1. Walking a bit index a (from d, then in
// steps of 23 so that consecutive choices use unrelated bits), the first 1 bit
// found at index d, d-1, ... picks the tree depth; the next d - 1 bits below
// it spell a number with a leading 1. A number < n is the answer; otherwise
// the walk goes on (at most 32 tries, then 0). Growing n only moves keys to
// the new servers: the consistent-hash property.
#include <array>
#include <cstring>

#include "hash/hash_functions.h"

namespace ithaca::proxy {

namespace {

constexpr std::uint64_t kMurmurMul = 0xc6a4a7935bd1e995ull;
constexpr int kMurmurShift = 47;
constexpr std::uint32_t kFurcSeed = 4193360111u;  // mcrouter's, chosen for diffusion
constexpr std::uint32_t kFurcTries = 32;
constexpr std::uint32_t kFurcStep = 23;   // bit-index gap per choice: pools up to 2^23
constexpr std::size_t kFurcCache = 1024;  // 64-bit words; > tries * (step + 1)

std::uint64_t mix_word(std::uint64_t k) {
  k *= kMurmurMul;
  k ^= k >> kMurmurShift;
  return k * kMurmurMul;
}

std::uint64_t finish(std::uint64_t h) {
  h ^= h >> kMurmurShift;
  h *= kMurmurMul;
  return h ^ (h >> kMurmurShift);
}

// MurmurHash64A of one 64-bit word with the furc seed (the rehash step).
std::uint64_t rehash(std::uint64_t k) {
  std::uint64_t h = std::uint64_t{kFurcSeed} ^ (sizeof(std::uint64_t) * kMurmurMul);
  h ^= mix_word(k);
  h *= kMurmurMul;
  return finish(h);
}

// The key's bit stream: bit `index` of hash[index / 64], each word the
// rehash of the one before, computed on demand.
class furc_bits {
 public:
  explicit furc_bits(std::string_view key) : key_(key) {}

  std::uint32_t bit(std::uint32_t index) {
    const std::uint32_t word = index >> 6;
    while (filled_ <= word && filled_ < kFurcCache) {
      words_[filled_] = filled_ == 0 ? murmur64a(key_, kFurcSeed) : rehash(words_[filled_ - 1]);
      ++filled_;
    }
    if (word >= kFurcCache) return 0;  // not reached: indices stay below 32 * 23 * 24
    return static_cast<std::uint32_t>(words_[word] >> (index & 63)) & 1u;
  }

 private:
  std::string_view key_;
  std::array<std::uint64_t, kFurcCache> words_;
  std::uint32_t filled_ = 0;
};

}  // namespace

std::uint64_t murmur64a(std::string_view data, std::uint64_t seed) {
  std::uint64_t h = seed ^ (data.size() * kMurmurMul);
  const std::size_t words = data.size() / 8;
  for (std::size_t i = 0; i < words; ++i) {
    std::uint64_t k;
    std::memcpy(&k, data.data() + i * 8, sizeof k);  // little-endian, as on mcrouter's hosts
    h ^= mix_word(k);
    h *= kMurmurMul;
  }
  const std::size_t tail = data.size() & 7;
  if (tail) {
    const auto* p = reinterpret_cast<const unsigned char*>(data.data()) + words * 8;
    for (std::size_t i = tail; i-- > 0;) h ^= std::uint64_t{p[i]} << (8 * i);
    h *= kMurmurMul;
  }
  return finish(h);
}

std::uint32_t furc_hash(std::string_view key, std::uint32_t m) {
  if (m <= 1) return 0;
  furc_bits bits(key);
  std::uint32_t d = 32u - static_cast<std::uint32_t>(__builtin_clz(m - 1u));
  std::uint32_t a = d;
  for (std::uint32_t attempt = 0; attempt < kFurcTries; ++attempt) {
    while (!bits.bit(a)) {
      if (--d == 0) return 0;
      a = d;
    }
    a += kFurcStep;
    std::uint32_t num = 1;
    for (std::uint32_t i = 0; i + 1 < d; ++i) {
      num = (num << 1) | bits.bit(a);
      a += kFurcStep;
    }
    if (num < m) return num;
  }
  return 0;  // give up: 0 is a valid server in every pool
}

std::uint32_t mcrouter_crc32(std::string_view key, std::uint32_t n) {
  return n == 0 ? 0 : (hash_crc32a(key) & 0x7fffffffu) % n;
}

}  // namespace ithaca::proxy
