#pragma once
// splitmix64's finalizer (Steele, Lea & Flood): a bijection on 64 bits in
// which every input bit affects every output bit. Jump widens the 32-bit key
// hash with it; rendezvous mixes key and server with it; random steps its
// thread-local state with it.

#include <cstdint>

namespace ithaca::proxy::detail {

inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

}  // namespace ithaca::proxy::detail
