#include "number.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

namespace ithaca::protocol {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// Parses |value| with strtoull-like rules; `negative` says a '-' was seen.
bool parse_magnitude(std::string_view t, std::uint64_t& value, bool& negative) {
  std::size_t i = 0;
  while (i < t.size() && is_space(t[i])) ++i;
  negative = false;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) {
    negative = t[i] == '-';
    ++i;
  }
  const std::size_t first_digit = i;
  std::uint64_t v = 0;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
    const auto d = static_cast<std::uint64_t>(t[i] - '0');
    if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
    ++i;
  }
  if (i == first_digit) return false;
  if (i < t.size() && !is_space(t[i])) return false;
  value = v;
  return true;
}

}  // namespace

std::optional<std::uint64_t> parse_u64(std::string_view token) {
  std::uint64_t v = 0;
  bool negative = false;
  if (!parse_magnitude(token, v, negative)) return std::nullopt;
  const std::uint64_t l = negative ? std::uint64_t{0} - v : v;
  if (negative && static_cast<std::int64_t>(l) < 0) return std::nullopt;
  return l;
}

std::optional<std::int64_t> parse_i64(std::string_view token) {
  std::uint64_t v = 0;
  bool negative = false;
  if (!parse_magnitude(token, v, negative)) return std::nullopt;
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (negative) {
    if (v > kMax + 1) return std::nullopt;
    return v == kMax + 1 ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(v);
  }
  if (v > kMax) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

std::optional<std::uint32_t> parse_strtoul32(std::string_view token) {
  auto v = parse_u64(token);
  if (!v) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

std::optional<std::uint32_t> parse_flags(std::string_view token) { return parse_strtoul32(token); }

std::optional<std::int32_t> parse_i32(std::string_view token) {
  auto v = parse_i64(token);
  if (!v) return std::nullopt;
  // Two's complement truncation, as the C assignment long -> int32_t does.
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(*v)));
}

namespace {

constexpr std::size_t kStrictMax32 = 11;  // mcmc's MCMC_TOKTO32_MAX
constexpr std::size_t kStrictMax64 = 22;  // MCMC_TOKTO64_MAX

// Digits only, accumulated with a range check against `limit`.
std::optional<std::uint64_t> strict_digits(std::string_view digits, std::uint64_t limit) {
  std::uint64_t sum = 0;
  for (const char ch : digits) {
    if (ch < '0' || ch > '9') return std::nullopt;
    const auto d = static_cast<std::uint64_t>(ch - '0');
    if (sum > (limit - d) / 10) return std::nullopt;
    sum = sum * 10 + d;
  }
  return sum;
}

}  // namespace

std::optional<std::int32_t> parse_strict_i32(std::string_view token) {
  if (token.size() > kStrictMax32) return std::nullopt;
  const bool negative = !token.empty() && token[0] == '-';
  if (negative) token.remove_prefix(1);
  const std::uint64_t limit = negative ? std::uint64_t{1} << 31 : (std::uint64_t{1} << 31) - 1;
  auto v = strict_digits(token, limit);
  if (!v) return std::nullopt;
  return negative ? static_cast<std::int32_t>(-static_cast<std::int64_t>(*v)) : static_cast<std::int32_t>(*v);
}

std::optional<std::uint32_t> parse_strict_u32(std::string_view token) {
  if (token.size() > kStrictMax32) return std::nullopt;
  auto v = strict_digits(token, UINT32_MAX);
  if (!v) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

std::optional<std::uint64_t> parse_strict_u64(std::string_view token) {
  if (token.size() > kStrictMax64) return std::nullopt;
  return strict_digits(token, UINT64_MAX);
}

std::optional<double> parse_f64(std::string_view token) {
  const std::string text(token);  // strtod wants a terminated string
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(text.c_str(), &end);
  if (errno == ERANGE || end == text.c_str()) return std::nullopt;
  if (*end != '\0' && !is_space(*end)) return std::nullopt;
  return d;
}

}  // namespace ithaca::protocol
