#pragma once
// Number tokens parsed the way memcached's safe_strtoul/safe_strtol/
// safe_strtoull do (strtol semantics): optional leading whitespace, optional
// sign, decimal digits, and then either the end of the token or a whitespace
// character (anything after it is ignored). Negative values are refused for
// the unsigned forms; overflow is refused for all. Learned from memcached
// 1.6.18: "+1" and "01" are accepted, "1x", "0x10" and "-1" (unsigned) are not.

#include <cstdint>
#include <optional>
#include <string_view>

namespace ithaca::protocol {

std::optional<std::uint64_t> parse_u64(std::string_view token);
std::optional<std::int64_t> parse_i64(std::string_view token);
// Client flags: memcached 1.6.18 parses 64 bits and keeps the low 32
// ("set a 4294967296 0 1" stores flags 0).
std::optional<std::uint32_t> parse_flags(std::string_view token);
// A 32-bit signed value (value lengths, meta TTLs): out of range is refused.
std::optional<std::int32_t> parse_i32(std::string_view token);
// memcached's safe_strtoul into a uint32_t, for cache_memlimit: strtoul reads
// 64 bits and a '-' negates modulo 2^64; the token is refused when that is
// negative as a signed number and a '-' was given, and the low 32 bits are
// kept. So "-0" is 0, "-5" is refused and "4294967304" is 8 (memcached 1.6.18).
std::optional<std::uint32_t> parse_strtoul32(std::string_view token);

}  // namespace ithaca::protocol
