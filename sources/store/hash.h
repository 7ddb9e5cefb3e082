// hash_key: the 64-bit key hash that picks a bucket. Seeded per store at start-up so clients
// cannot aim many keys at one bucket (and one bucket lock).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace ithaca::store {

inline uint64_t hash_mix(uint64_t x) noexcept
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

inline uint64_t hash_key(std::string_view key, uint64_t seed) noexcept
{
    constexpr uint64_t kMul = 0x9e3779b97f4a7c15ULL;
    uint64_t h = seed ^ (key.size() * kMul);
    const char* p = key.data();
    size_t n = key.size();
    while (n >= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        h = (h ^ hash_mix(w)) * kMul;
        h = (h << 29) | (h >> 35);
        p += 8;
        n -= 8;
    }
    uint64_t tail = 0;
    std::memcpy(&tail, p, n);
    h ^= hash_mix(tail + n);
    return hash_mix(h);
}

}  // namespace ithaca::store
