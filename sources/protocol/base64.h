#pragma once
// Standard base64 (RFC 4648, with padding), for meta keys sent with the 'b'
// flag. Decoding is strict, as memcached's: the length must be a multiple of
// four and '=' may only pad the last quantum ("Zm9v=" is refused).

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace ithaca::protocol {

// Decodes `in` into `out`; returns the decoded length, or nullopt if `in` is
// not valid base64, decodes to nothing, or does not fit in `out`.
std::optional<std::size_t> base64_decode(std::string_view in, std::span<char> out);

// Encoded length of n bytes.
constexpr std::size_t base64_encoded_size(std::size_t n) { return (n + 2) / 3 * 4; }

// Encodes `in` into `out` (which must hold base64_encoded_size(in.size())).
std::size_t base64_encode(std::string_view in, std::span<char> out);

}  // namespace ithaca::protocol
