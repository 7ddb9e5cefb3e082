// The four FNV variants as twemproxy computes them. Key bytes are
// sign-extended (see hash_functions.h). fnv1a_64 is not 64-bit FNV-1a: it runs
// in 32 bits with the low halves of the 64-bit offset basis and prime, and
// fnv1_64 is the low 32 bits of a real 64-bit FNV-1.
#include "hash/hash_functions.h"

namespace ithaca::proxy {

namespace {
constexpr std::uint64_t kFnv64Basis = 0xcbf29ce484222325ull;
constexpr std::uint64_t kFnv64Prime = 0x100000001b3ull;
constexpr std::uint32_t kFnv32Basis = 2166136261u;
constexpr std::uint32_t kFnv32Prime = 16777619u;
}  // namespace

std::uint32_t hash_fnv1_64(std::string_view key) {
  std::uint64_t h = kFnv64Basis;
  for (char c : key) {
    h *= kFnv64Prime;
    h ^= static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int8_t>(c)));
  }
  return static_cast<std::uint32_t>(h);
}

std::uint32_t hash_fnv1a_64(std::string_view key) {
  std::uint32_t h = static_cast<std::uint32_t>(kFnv64Basis);
  for (char c : key) {
    h ^= signed_byte(c);
    h *= static_cast<std::uint32_t>(kFnv64Prime);
  }
  return h;
}

std::uint32_t hash_fnv1_32(std::string_view key) {
  std::uint32_t h = kFnv32Basis;
  for (char c : key) {
    h *= kFnv32Prime;
    h ^= signed_byte(c);
  }
  return h;
}

std::uint32_t hash_fnv1a_32(std::string_view key) {
  std::uint32_t h = kFnv32Basis;
  for (char c : key) {
    h ^= signed_byte(c);
    h *= kFnv32Prime;
  }
  return h;
}

}  // namespace ithaca::proxy
