// twemproxy's three CRCs. The tables are built at compile time from the
// polynomials rather than written out.
#include <array>

#include "hash/hash_functions.h"

namespace ithaca::proxy {

namespace {

// CRC-32, reflected polynomial 0xEDB88320 (IEEE 802.3).
constexpr std::array<std::uint32_t, 256> make_crc32_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    t[i] = c;
  }
  return t;
}

// CRC-16, polynomial 0x1021, most significant bit first (XMODEM).
constexpr std::array<std::uint16_t, 256> make_crc16_table() {
  std::array<std::uint16_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i << 8;
    for (int k = 0; k < 8; ++k) c = (c & 0x8000) ? (c << 1) ^ 0x1021u : c << 1;
    t[i] = static_cast<std::uint16_t>(c);
  }
  return t;
}

constexpr auto kCrc32 = make_crc32_table();
constexpr auto kCrc16 = make_crc16_table();

std::uint32_t crc32_raw(std::string_view key) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (char c : key) crc = (crc >> 8) ^ kCrc32[(crc ^ unsigned_byte(c)) & 0xFF];
  return ~crc;
}

}  // namespace

std::uint32_t hash_crc32a(std::string_view key) { return crc32_raw(key); }

// libmemcached's "crc32" (twemproxy keeps it for compatibility): only 15 bits
// of the real CRC survive.
std::uint32_t hash_crc32(std::string_view key) { return (crc32_raw(key) >> 16) & 0x7FFF; }

// twemproxy keeps the running value in 32 bits and never masks it, so bits
// above 16 carry the shifted-out history; the low 16 bits are CRC-16/XMODEM.
// Its value is returned whole, as twemproxy does.
std::uint32_t hash_crc16(std::string_view key) {
  std::uint32_t crc = 0;
  for (char c : key) crc = (crc << 8) ^ kCrc16[((crc >> 8) ^ unsigned_byte(c)) & 0xFF];
  return crc;
}

}  // namespace ithaca::proxy
