#include "number.h"

#include <limits>

namespace ithaca::protocol {
namespace {

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

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
    if (!parse_magnitude(token, v, negative) || negative) return std::nullopt;
    return v;
}

std::optional<std::int64_t> parse_i64(std::string_view token) {
    std::uint64_t v = 0;
    bool negative = false;
    if (!parse_magnitude(token, v, negative)) return std::nullopt;
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (negative) {
        if (v > kMax + 1) return std::nullopt;
        return v == kMax + 1 ? std::numeric_limits<std::int64_t>::min()
                             : -static_cast<std::int64_t>(v);
    }
    if (v > kMax) return std::nullopt;
    return static_cast<std::int64_t>(v);
}

std::optional<std::uint32_t> parse_flags(std::string_view token) {
    auto v = parse_u64(token);
    if (!v) return std::nullopt;
    return static_cast<std::uint32_t>(*v);
}

std::optional<std::int32_t> parse_i32(std::string_view token) {
    auto v = parse_i64(token);
    if (!v || *v > std::numeric_limits<std::int32_t>::max() ||
        *v < std::numeric_limits<std::int32_t>::min()) {
        return std::nullopt;
    }
    return static_cast<std::int32_t>(*v);
}

std::optional<std::uint32_t> parse_strtoul32(std::string_view token) {
    std::uint64_t v = 0;
    bool negative = false;
    if (!parse_magnitude(token, v, negative)) return std::nullopt;
    const std::uint64_t l = negative ? std::uint64_t{0} - v : v;
    if (negative && static_cast<std::int64_t>(l) < 0) return std::nullopt;
    return static_cast<std::uint32_t>(l);
}

}  // namespace ithaca::protocol
