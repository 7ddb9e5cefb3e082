// The key hash functions a pool (or a hash route) can choose: twemproxy's
// `hash:` setting, every one of its choices. The config readers parse the
// names; proxy/hash/hash_kind.h computes each (hash_key), bit for bit as
// nutcracker does.
#pragma once

#include <cstdint>
#include <span>

#include "name_table.h"

namespace ithaca::kinds {

enum class hash_kind : std::uint8_t {
  OneAtATime,  // Jenkins' one-at-a-time
  Md5,         // the first 4 digest bytes, little-endian (libmemcached's)
  Crc16,       // CRC-16/XMODEM with twemproxy's unmasked high bits
  Crc32,       // libmemcached's, (crc32 >> 16) & 0x7fff, 15 bits only
  Crc32a,      // the standard CRC-32 (0xCBF43926 for "123456789")
  Fnv1_64,     // the low 32 bits of 64-bit FNV-1
  Fnv1a_64,    // FNV-1a run in 32 bits with the 64-bit constants' low halves
  Fnv1_32,
  Fnv1a_32,
  Hsieh,    // Paul Hsieh's SuperFastHash
  Murmur,   // MurmurHash2 with libmemcached's seed (0xdeadbeef * length)
  Jenkins,  // Bob Jenkins' lookup3 hashlittle, initval 13
};

inline constexpr int kHashKindCount = 12;

// twemproxy's names, in its README's order (and the enum's).
inline constexpr enum_name<hash_kind> kHashKindNames[] = {
    {hash_kind::OneAtATime, "one_at_a_time"},
    {hash_kind::Md5, "md5"},
    {hash_kind::Crc16, "crc16"},
    {hash_kind::Crc32, "crc32"},
    {hash_kind::Crc32a, "crc32a"},
    {hash_kind::Fnv1_64, "fnv1_64"},
    {hash_kind::Fnv1a_64, "fnv1a_64"},
    {hash_kind::Fnv1_32, "fnv1_32"},
    {hash_kind::Fnv1a_32, "fnv1a_32"},
    {hash_kind::Hsieh, "hsieh"},
    {hash_kind::Murmur, "murmur"},
    {hash_kind::Jenkins, "jenkins"},
};
constexpr std::span<const enum_name<hash_kind>> name_table(hash_kind) { return kHashKindNames; }
static_assert(names_each_once(name_table(hash_kind{}), kHashKindCount));

}  // namespace ithaca::kinds
