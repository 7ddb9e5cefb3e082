#include "units.h"

#include <charconv>
#include <cctype>
#include <limits>

namespace ithaca::config {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits "64MiB" into 64 and "mib". False if there are no leading digits.
bool split_number(std::string_view text, uint64_t& number, std::string& suffix) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || !parse_unsigned(text.substr(0, digits), number)) return false;
  suffix = lower(text.substr(digits));
  return true;
}

bool multiply(uint64_t a, uint64_t b, uint64_t& out) {
  if (b != 0 && a > std::numeric_limits<uint64_t>::max() / b) return false;
  out = a * b;
  return true;
}

}  // namespace

bool parse_unsigned(std::string_view text, uint64_t& out) {
  if (text.empty()) return false;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  out = v;
  return true;
}

bool parse_octal_mode(std::string_view text, unsigned& mode) {
  if (text.empty() || text.size() > 4) return false;
  unsigned v = 0;
  for (char c : text) {
    if (c < '0' || c > '7') return false;
    v = v * 8 + static_cast<unsigned>(c - '0');
  }
  if (v > 0777) return false;
  mode = v;
  return true;
}

bool parse_size(std::string_view text, uint64_t& bytes) {
  uint64_t n = 0;
  std::string suffix;
  if (!split_number(text, n, suffix)) return false;
  uint64_t unit = 0;
  if (suffix.empty() || suffix == "b") {
    unit = 1;
  } else if (suffix == "k" || suffix == "kb" || suffix == "kib") {
    unit = 1ull << 10;
  } else if (suffix == "m" || suffix == "mb" || suffix == "mib") {
    unit = 1ull << 20;
  } else if (suffix == "g" || suffix == "gb" || suffix == "gib") {
    unit = 1ull << 30;
  } else if (suffix == "t" || suffix == "tb" || suffix == "tib") {
    unit = 1ull << 40;
  } else {
    return false;
  }
  return multiply(n, unit, bytes);
}

bool parse_duration(std::string_view text, uint64_t& ms) {
  uint64_t n = 0;
  std::string suffix;
  if (!split_number(text, n, suffix)) return false;
  uint64_t unit = 0;
  if (suffix.empty()) {
    if (n != 0) return false;
    unit = 1;
  } else if (suffix == "ms") {
    unit = 1;
  } else if (suffix == "s") {
    unit = 1000;
  } else if (suffix == "m" || suffix == "min") {
    unit = 60 * 1000;
  } else if (suffix == "h") {
    unit = 3600 * 1000;
  } else {
    return false;
  }
  return multiply(n, unit, ms);
}

std::string format_size(uint64_t bytes) {
  if (bytes != 0 && bytes % (1ull << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes != 0 && bytes % (1ull << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes != 0 && bytes % (1ull << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

std::string format_duration(uint64_t ms) {
  if (ms != 0 && ms % 3600000 == 0) return std::to_string(ms / 3600000) + "h";
  if (ms != 0 && ms % 60000 == 0) return std::to_string(ms / 60000) + "m";
  if (ms != 0 && ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

std::string format_value(value_kind kind, uint64_t v) {
  switch (kind) {
    case value_kind::Integer: return std::to_string(v);
    case value_kind::Size: return format_size(v);
    case value_kind::Duration: return format_duration(v);
  }
  return std::to_string(v);
}

std::string describe(value_kind kind, range r) {
  std::string what;
  switch (kind) {
    case value_kind::Integer: what = "an integer"; break;
    case value_kind::Size: what = "a size (512k, 64m, 1g)"; break;
    case value_kind::Duration: what = "a duration (500ms, 2s, 1m)"; break;
  }
  return what + " from " + format_value(kind, r.min) + " to " + format_value(kind, r.max);
}

}  // namespace ithaca::config
