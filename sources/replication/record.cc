#include "record.h"

#include <cstring>
#include <limits>

#include "binary_format.h"

namespace ithaca::replication {

namespace {
using protocol::opcode;

char* header(char* out, opcode op, std::string_view key, uint8_t extras, size_t value_len) {
  protocol::binary_header h;
  h.magic = protocol::kBinaryRequestMagic;
  h.opcode = static_cast<uint8_t>(op);
  h.key_length = static_cast<uint16_t>(key.size());
  h.extras_length = extras;
  h.body_length = static_cast<uint32_t>(extras + key.size() + value_len);
  protocol::encode_header(h, out);
  return out + kHeaderSize;
}

char* put_key(char* p, std::string_view key) {
  std::memcpy(p, key.data(), key.size());
  return p + key.size();
}
}  // namespace

size_t encode_set_prefix(char* out, std::string_view key, uint32_t flags, uint32_t exptime, size_t value_len) {
  char* p = header(out, opcode::SetQ, key, kSetExtras, value_len);
  protocol::store_be32(p, flags);
  protocol::store_be32(p + 4, exptime);
  p = put_key(p + kSetExtras, key);
  return static_cast<size_t>(p - out);
}

size_t encode_set(char* out, std::string_view key, uint32_t flags, uint32_t exptime, std::string_view value) {
  size_t n = encode_set_prefix(out, key, flags, exptime, value.size());
  if (!value.empty()) std::memcpy(out + n, value.data(), value.size());
  return n + value.size();
}

size_t encode_touch(char* out, std::string_view key, uint32_t exptime) {
  char* p = header(out, opcode::Touch, key, kTouchExtras, 0);
  protocol::store_be32(p, exptime);
  p = put_key(p + kTouchExtras, key);
  return static_cast<size_t>(p - out);
}

size_t encode_delete(char* out, std::string_view key) {
  char* p = put_key(header(out, opcode::DeleteQ, key, 0, 0), key);
  return static_cast<size_t>(p - out);
}

namespace {
size_t encode_ack(char* out, uint8_t magic, uint64_t position) {
  protocol::binary_header h;
  h.magic = magic;
  h.opcode = static_cast<uint8_t>(opcode::Noop);
  h.cas = position;
  protocol::encode_header(h, out);
  return kAckSize;
}
}  // namespace

size_t encode_ack_request(char* out, uint64_t position) {
  return encode_ack(out, protocol::kBinaryRequestMagic, position);
}

size_t encode_ack_response(char* out, uint64_t position) {
  return encode_ack(out, protocol::kBinaryResponseMagic, position);
}

uint32_t wire_exptime(int64_t unix_deadline) {
  if (unix_deadline <= 0) return 0;
  constexpr int64_t kMax = std::numeric_limits<uint32_t>::max();
  return static_cast<uint32_t>(unix_deadline > kMax ? kMax : unix_deadline);
}

}  // namespace ithaca::replication
