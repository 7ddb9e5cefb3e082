#pragma once
// The key hash functions a pool can choose: twemproxy's `hash:` setting,
// every one of its choices, each giving exactly the 32-bit value nutcracker
// computes (on x86-64, where its `char` is signed: see hash_functions.h).
// Pure functions of their input; callable from any thread.

#include <cstdint>
#include <string_view>

namespace ithaca::proxy {

enum class hash_kind : std::uint8_t {
    OneAtATime,  // "one_at_a_time": Jenkins' one-at-a-time
    Md5,         // "md5": the first 4 digest bytes, little-endian (libmemcached's)
    Crc16,       // "crc16": CRC-16/XMODEM with twemproxy's unmasked high bits
    Crc32,       // "crc32": libmemcached's, (crc32 >> 16) & 0x7fff, 15 bits only
    Crc32a,      // "crc32a": the standard CRC-32 (0xCBF43926 for "123456789")
    Fnv1_64,     // "fnv1_64": the low 32 bits of 64-bit FNV-1
    Fnv1a_64,    // "fnv1a_64": FNV-1a run in 32 bits with the 64-bit constants' low halves
    Fnv1_32,     // "fnv1_32"
    Fnv1a_32,    // "fnv1a_32"
    Hsieh,       // "hsieh": Paul Hsieh's SuperFastHash
    Murmur,      // "murmur": MurmurHash2 with libmemcached's seed (0xdeadbeef * length)
    Jenkins,     // "jenkins": Bob Jenkins' lookup3 hashlittle, initval 13
};

inline constexpr int kHashKindCount = 12;

// twemproxy's names, as in its `hash:` setting. Returns false (out untouched)
// for anything else.
bool parse_hash_kind(std::string_view name, hash_kind& out);
std::string_view to_string(hash_kind kind);

// twemproxy's value of `key` under `kind`, bit for bit.
std::uint32_t hash_key(hash_kind kind, std::string_view key);

}  // namespace ithaca::proxy
