#pragma once
// The memcached binary protocol's fixed parts: magic bytes, opcodes and the
// 24-byte header (all integers big-endian on the wire).

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ithaca::protocol {

inline constexpr std::uint8_t kBinaryRequestMagic = 0x80;
inline constexpr std::uint8_t kBinaryResponseMagic = 0x81;
inline constexpr std::size_t kBinaryHeaderSize = 24;
// memcached's MAX_SASL_MECH_LEN: the longest SASL mechanism name (a SASL
// request's key).
inline constexpr std::size_t kMaxSaslMechLength = 32;

enum class opcode : std::uint8_t {
  Get = 0x00,
  Set = 0x01,
  Add = 0x02,
  Replace = 0x03,
  Delete = 0x04,
  Increment = 0x05,
  Decrement = 0x06,
  Quit = 0x07,
  Flush = 0x08,
  GetQ = 0x09,
  Noop = 0x0a,
  Version = 0x0b,
  GetK = 0x0c,
  GetKQ = 0x0d,
  Append = 0x0e,
  Prepend = 0x0f,
  Stat = 0x10,
  SetQ = 0x11,
  AddQ = 0x12,
  ReplaceQ = 0x13,
  DeleteQ = 0x14,
  IncrementQ = 0x15,
  DecrementQ = 0x16,
  QuitQ = 0x17,
  FlushQ = 0x18,
  AppendQ = 0x19,
  PrependQ = 0x1a,
  Verbosity = 0x1b,
  Touch = 0x1c,
  Gat = 0x1d,
  GatQ = 0x1e,
  SaslListMechs = 0x20,
  SaslAuth = 0x21,
  SaslStep = 0x22,
  GatK = 0x23,
  GatKQ = 0x24,
};

struct binary_header {
  std::uint8_t magic = 0;
  std::uint8_t opcode = 0;
  std::uint16_t key_length = 0;
  std::uint8_t extras_length = 0;
  std::uint8_t data_type = 0;
  std::uint16_t vbucket_or_status = 0;  // request: vbucket; response: status
  std::uint32_t body_length = 0;
  std::uint32_t opaque = 0;
  std::uint64_t cas = 0;
};

inline std::uint16_t load_be16(const char* p) {
  return static_cast<std::uint16_t>((static_cast<unsigned char>(p[0]) << 8) | static_cast<unsigned char>(p[1]));
}
inline std::uint32_t load_be32(const char* p) { return (std::uint32_t{load_be16(p)} << 16) | load_be16(p + 2); }
inline std::uint64_t load_be64(const char* p) { return (std::uint64_t{load_be32(p)} << 32) | load_be32(p + 4); }
inline void store_be16(char* p, std::uint16_t v) {
  p[0] = static_cast<char>(v >> 8);
  p[1] = static_cast<char>(v & 0xff);
}
inline void store_be32(char* p, std::uint32_t v) {
  store_be16(p, static_cast<std::uint16_t>(v >> 16));
  store_be16(p + 2, static_cast<std::uint16_t>(v & 0xffff));
}
inline void store_be64(char* p, std::uint64_t v) {
  store_be32(p, static_cast<std::uint32_t>(v >> 32));
  store_be32(p + 4, static_cast<std::uint32_t>(v & 0xffffffffu));
}

// `p` must hold kBinaryHeaderSize bytes.
inline binary_header decode_header(const char* p) {
  binary_header h;
  h.magic = static_cast<std::uint8_t>(p[0]);
  h.opcode = static_cast<std::uint8_t>(p[1]);
  h.key_length = load_be16(p + 2);
  h.extras_length = static_cast<std::uint8_t>(p[4]);
  h.data_type = static_cast<std::uint8_t>(p[5]);
  h.vbucket_or_status = load_be16(p + 6);
  h.body_length = load_be32(p + 8);
  h.opaque = load_be32(p + 12);
  h.cas = load_be64(p + 16);
  return h;
}

inline void encode_header(const binary_header& h, char* p) {
  p[0] = static_cast<char>(h.magic);
  p[1] = static_cast<char>(h.opcode);
  store_be16(p + 2, h.key_length);
  p[4] = static_cast<char>(h.extras_length);
  p[5] = static_cast<char>(h.data_type);
  store_be16(p + 6, h.vbucket_or_status);
  store_be32(p + 8, h.body_length);
  store_be32(p + 12, h.opaque);
  store_be64(p + 16, h.cas);
}

}  // namespace ithaca::protocol
