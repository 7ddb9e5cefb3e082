#pragma once
// Number tokens parsed the way memcached 1.6.18's safe_strto* functions do
// (strtol semantics): optional leading whitespace, optional sign, decimal
// digits, and then either the end of the token or a whitespace character
// (anything after it is ignored). Overflow of 64 bits is refused. Each
// function names the memcached function it reproduces, because their quirks
// are part of the wire behaviour: "+1" and "01" are accepted, "1x" and "0x10"
// are not, an unsigned "-0" is 0, and the 32-bit forms read 64 bits and keep
// the low 32 ("set a 0 0 4294967297" stores one byte).

#include <cstdint>
#include <optional>
#include <string_view>

namespace ithaca::protocol {

// safe_strtoull: strtoull negates modulo 2^64 after a '-'; the token is
// refused only when a '-' was given and the result is negative as a signed
// number. So "-0" is 0 and "-5" is refused. CAS uniques, deltas, meta C/E/J/D.
std::optional<std::uint64_t> parse_u64(std::string_view token);
// safe_strtoll: a signed 64-bit number (flush_all's delay).
std::optional<std::int64_t> parse_i64(std::string_view token);
// safe_strtoul into a uint32_t: parse_u64's rule, then the low 32 bits
// ("4294967304" is 8). Client flags, verbosity, cache_memlimit.
std::optional<std::uint32_t> parse_strtoul32(std::string_view token);
std::optional<std::uint32_t> parse_flags(std::string_view token);
// safe_strtol into an int32_t: a signed 64-bit number, then the low 32 bits
// as a signed value ("-2147483649" is 2147483647, "4294967296" is 0).
// Exptimes, value lengths, meta N/T/R.
std::optional<std::int32_t> parse_i32(std::string_view token);

// memcached 1.6.45 reads meta tokens (and ms's length) with its mcmc
// tokenizer's strict parsers instead: decimal digits only (no '+', no blanks),
// at most 11 characters (22 for 64 bits), range-checked; the signed ones take
// a leading '-', alone it is 0.
std::optional<std::int32_t> parse_strict_i32(std::string_view token);
std::optional<std::uint32_t> parse_strict_u32(std::string_view token);
std::optional<std::uint64_t> parse_strict_u64(std::string_view token);

// safe_strtod: strtod's syntax, then the end or a whitespace character;
// ERANGE refused (lru tune's factors, slabs automove ratio).
std::optional<double> parse_f64(std::string_view token);

}  // namespace ithaca::protocol
