// Sizes and durations as people write them in config files and flags.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ithaca::config {

// An inclusive range of allowed values.
struct range {
  uint64_t min;
  uint64_t max;
  bool contains(uint64_t v) const { return v >= min && v <= max; }
};

enum class value_kind { Integer, Size, Duration };

// "an integer from 1 to 256", "a size from 1 KiB to 1 GiB",
// "a duration (500ms, 2s, 1m) from 1ms to 1h": the middle of every
// "KEY: expected ..., got ..." message.
std::string describe(value_kind kind, range r);
// A value in the unit of its kind: "256", "64 MiB", "2s".
std::string format_value(value_kind kind, uint64_t v);

// Bytes: "1048576", "512k", "64m", "64MiB", "1g", "1GB". Suffixes are case
// insensitive and binary (k = KiB = 1024), as memcached's -I reads them.
// False on anything else, on a negative number, or on overflow.
bool parse_size(std::string_view text, uint64_t& bytes);

// Milliseconds: "500ms", "2s", "1m", "1h". A unit is required (a bare "600"
// could mean seconds to a memcached user and milliseconds to us), except for
// "0". False on anything else or on overflow.
bool parse_duration(std::string_view text, uint64_t& ms);

// Unsigned decimal only: no sign, no spaces, no hex. False on overflow.
bool parse_unsigned(std::string_view text, uint64_t& out);

// A permission mode in octal, as memcached's -a reads it: "700", "0700",
// "0". Digits 0-7 only, at most 0777. False on anything else.
bool parse_octal_mode(std::string_view text, unsigned& mode);

// For messages: "64 MiB", "1536 KiB", "1000 bytes".
std::string format_size(uint64_t bytes);
// For messages: "2s", "1500ms".
std::string format_duration(uint64_t ms);

}  // namespace ithaca::config
