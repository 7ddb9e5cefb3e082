#include "base64.h"

#include <cstdint>

namespace ithaca::protocol {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int value_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::optional<std::size_t> base64_decode(std::string_view in, std::span<char> out) {
  if (in.empty() || in.size() % 4 != 0) return std::nullopt;
  std::size_t n = 0;
  for (std::size_t i = 0; i < in.size(); i += 4) {
    const bool last = i + 4 == in.size();
    int v[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      const char c = in[i + static_cast<std::size_t>(j)];
      if (c == '=' && last && j >= 2) {
        v[j] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return std::nullopt;  // data after padding
      v[j] = value_of(c);
      if (v[j] < 0) return std::nullopt;
    }
    const std::uint32_t q = (static_cast<std::uint32_t>(v[0]) << 18) | (static_cast<std::uint32_t>(v[1]) << 12) |
                            (static_cast<std::uint32_t>(v[2]) << 6) | static_cast<std::uint32_t>(v[3]);
    const int bytes = 3 - pad;
    if (n + static_cast<std::size_t>(bytes) > out.size()) return std::nullopt;
    out[n++] = static_cast<char>(q >> 16);
    if (bytes > 1) out[n++] = static_cast<char>((q >> 8) & 0xff);
    if (bytes > 2) out[n++] = static_cast<char>(q & 0xff);
  }
  return n;
}

std::size_t base64_encode(std::string_view in, std::span<char> out) {
  std::size_t n = 0;
  std::size_t i = 0;
  auto byte = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(in[k])); };
  for (; i + 3 <= in.size(); i += 3) {
    const std::uint32_t q = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    out[n++] = kAlphabet[(q >> 18) & 63];
    out[n++] = kAlphabet[(q >> 12) & 63];
    out[n++] = kAlphabet[(q >> 6) & 63];
    out[n++] = kAlphabet[q & 63];
  }
  const std::size_t rest = in.size() - i;
  if (rest > 0) {
    std::uint32_t q = byte(i) << 16;
    if (rest == 2) q |= byte(i + 1) << 8;
    out[n++] = kAlphabet[(q >> 18) & 63];
    out[n++] = kAlphabet[(q >> 12) & 63];
    out[n++] = rest == 2 ? kAlphabet[(q >> 6) & 63] : '=';
    out[n++] = '=';
  }
  return n;
}

}  // namespace ithaca::protocol
