#pragma once
// One function per hash family (one .cc each), as twemproxy 0.5.0 computes
// them. hash_key() in hash_key.h is how the rest of the program calls them;
// the unit tests call them directly.
//
// Signedness: twemproxy reads keys through `const char*`, and on x86-64 a
// char is signed, so several of its functions sign-extend bytes >= 0x80
// (fnv1_64, fnv1a_64, fnv1_32, fnv1a_32, one_at_a_time, and hsieh's 3-byte
// tail). These functions do the same on purpose, whatever the host's char.

#include <array>
#include <cstdint>
#include <string_view>

namespace ithaca::proxy {

using md5_digest_t = std::array<std::uint8_t, 16>;

// RFC 1321 MD5 of `data` (ketama hashes its continuum points with it).
md5_digest_t md5_digest(std::string_view data);
// The digest's bytes [4*word, 4*word+4) as a little-endian number: ketama's
// point value for word 0..3, and the md5 key hash for word 0.
std::uint32_t md5_word(const md5_digest_t& digest, unsigned word);

std::uint32_t hash_md5(std::string_view key);
std::uint32_t hash_crc16(std::string_view key);
std::uint32_t hash_crc32(std::string_view key);
std::uint32_t hash_crc32a(std::string_view key);
std::uint32_t hash_fnv1_64(std::string_view key);
std::uint32_t hash_fnv1a_64(std::string_view key);
std::uint32_t hash_fnv1_32(std::string_view key);
std::uint32_t hash_fnv1a_32(std::string_view key);
std::uint32_t hash_hsieh(std::string_view key);
std::uint32_t hash_murmur(std::string_view key);
std::uint32_t hash_jenkins(std::string_view key);
std::uint32_t hash_one_at_a_time(std::string_view key);

// mcrouter's hashes (furc.cc, spooky.cc), bit-exact with its fbi/hash.c and
// folly's SpookyHashV2, for its Ch3, WeightedCh3 and Crc32 pool hashes.
// MurmurHash2, 64-bit (MurmurHash64A).
std::uint64_t murmur64a(std::string_view data, std::uint64_t seed);
// mcrouter's Ch3 consistent hash: a server index in [0, m) (0 when m <= 1).
// For pools of up to kFurcMaxServers.
std::uint32_t furc_hash(std::string_view key, std::uint32_t m);
inline constexpr std::uint32_t kFurcMaxServers = 1u << 23;
// mcrouter's Crc32 hash: (crc32(key) & 0x7fffffff) % n (0 when n is 0).
std::uint32_t mcrouter_crc32(std::string_view key, std::uint32_t n);
// SpookyHash V2: the 128-bit hash (seeds in, hash out) and its low 32 bits.
void spooky_v2_hash128(std::string_view message, std::uint64_t& hash1, std::uint64_t& hash2);
std::uint32_t spooky_v2_hash32(std::string_view message, std::uint32_t seed);

// A key byte as twemproxy's `(uint32_t)key[i]` sees it on x86-64 (signed char).
inline std::uint32_t signed_byte(char c) {
  return static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int8_t>(c)));
}
// A key byte read through an unsigned pointer.
inline std::uint32_t unsigned_byte(char c) { return static_cast<std::uint8_t>(c); }

}  // namespace ithaca::proxy
