#include "hash/hash_key.h"

#include <array>

#include "hash/hash_functions.h"

namespace ithaca::proxy {

namespace {

struct hash_entry {
  hash_kind kind;
  std::uint32_t (*fn)(std::string_view);
};

// In the enum's order, so kHashes[int(kind)] is kind's entry.
constexpr std::array<hash_entry, kinds::kHashKindCount> kHashes{{
    {hash_kind::OneAtATime, hash_one_at_a_time},
    {hash_kind::Md5, hash_md5},
    {hash_kind::Crc16, hash_crc16},
    {hash_kind::Crc32, hash_crc32},
    {hash_kind::Crc32a, hash_crc32a},
    {hash_kind::Fnv1_64, hash_fnv1_64},
    {hash_kind::Fnv1a_64, hash_fnv1a_64},
    {hash_kind::Fnv1_32, hash_fnv1_32},
    {hash_kind::Fnv1a_32, hash_fnv1a_32},
    {hash_kind::Hsieh, hash_hsieh},
    {hash_kind::Murmur, hash_murmur},
    {hash_kind::Jenkins, hash_jenkins},
}};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kHashes.size(); ++i) {
    if (static_cast<std::size_t>(kHashes[i].kind) != i) return false;
  }
  return true;
}
static_assert(in_enum_order(), "kHashes must list hash_kind in enum order");

}  // namespace

std::uint32_t hash_key(hash_kind kind, std::string_view key) { return kHashes[static_cast<std::size_t>(kind)].fn(key); }

}  // namespace ithaca::proxy
