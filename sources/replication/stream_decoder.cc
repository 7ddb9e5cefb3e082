#include "stream_decoder.h"

#include <algorithm>

#include "binary_format.h"
#include "record.h"

namespace ithaca::replication {

namespace {
using protocol::opcode;
constexpr size_t kKeyMax = 250;
}  // namespace

size_t stream_decoder::check_header(const char* p) {
  const protocol::binary_header h = protocol::decode_header(p);
  if (h.magic != protocol::kBinaryRequestMagic) {
    error_ = "replication stream: bad magic byte";
    return 0;
  }
  if (static_cast<opcode>(h.opcode) == opcode::Noop) {
    // The master's confirmation request: a bare header.
    if (h.extras_length != 0 || h.key_length != 0 || h.body_length != 0) {
      error_ = "replication stream: a confirmation request with a body";
      return 0;
    }
    return kHeaderSize;
  }
  size_t extras = 0;
  switch (static_cast<opcode>(h.opcode)) {
    case opcode::SetQ: extras = kSetExtras; break;
    case opcode::Touch: extras = kTouchExtras; break;
    case opcode::DeleteQ: extras = 0; break;
    default: error_ = "replication stream: unexpected opcode " + std::to_string(h.opcode); return 0;
  }
  if (h.extras_length != extras || h.key_length == 0 || h.key_length > kKeyMax ||
      h.body_length < size_t{h.key_length} + extras) {
    error_ = "replication stream: lengths do not fit the opcode";
    return 0;
  }
  const size_t value_len = h.body_length - h.key_length - extras;
  if (static_cast<opcode>(h.opcode) != opcode::SetQ && value_len != 0) {
    error_ = "replication stream: a value on a touch or delete";
    return 0;
  }
  if (value_len > max_value_) {
    error_ = "replication stream: value of " + std::to_string(value_len) + " bytes over the limit";
    return 0;
  }
  return kHeaderSize + h.body_length;
}

// `packet` passed check_header and holds its whole size.
void stream_decoder::decode(const char* packet, record& out) const {
  const protocol::binary_header h = protocol::decode_header(packet);
  const char* p = packet + kHeaderSize;
  out.flags = 0;
  out.exptime = 0;
  out.value = {};
  out.position = 0;
  if (static_cast<opcode>(h.opcode) == opcode::Noop) {
    out.kind = record_kind::Ack;
    out.key = {};
    out.position = h.cas;
    return;
  }
  switch (static_cast<opcode>(h.opcode)) {
    case opcode::SetQ:
      out.kind = record_kind::Set;
      out.flags = protocol::load_be32(p);
      out.exptime = protocol::load_be32(p + 4);
      break;
    case opcode::Touch:
      out.kind = record_kind::Touch;
      out.exptime = protocol::load_be32(p);
      break;
    default: out.kind = record_kind::Delete; break;
  }
  p += h.extras_length;
  out.key = std::string_view(p, h.key_length);
  p += h.key_length;
  out.value = std::string_view(p, h.body_length - h.key_length - h.extras_length);
}

decode_status stream_decoder::next(std::string_view& in, record& out) {
  if (!error_.empty()) return decode_status::Error;
  if (buffer_done_) {
    buffer_.clear();  // keeps its capacity for the next split record
    buffer_done_ = false;
  }
  if (buffer_.empty() && in.size() >= kHeaderSize) {
    const size_t total = check_header(in.data());
    if (total == 0) return decode_status::Error;
    if (in.size() >= total) {
      decode(in.data(), out);
      in.remove_prefix(total);
      return decode_status::Ok;
    }
  }
  // Gather: first the header, then (once it is checked) the rest.
  if (buffer_.size() < kHeaderSize) {
    const size_t take = std::min(kHeaderSize - buffer_.size(), in.size());
    buffer_.append(in.data(), take);
    in.remove_prefix(take);
    if (buffer_.size() < kHeaderSize) return decode_status::NeedMore;
  }
  const size_t total = check_header(buffer_.data());
  if (total == 0) return decode_status::Error;
  const size_t take = std::min(total - buffer_.size(), in.size());
  buffer_.append(in.data(), take);
  in.remove_prefix(take);
  if (buffer_.size() < total) return decode_status::NeedMore;
  decode(buffer_.data(), out);
  buffer_done_ = true;
  return decode_status::Ok;
}

}  // namespace ithaca::replication
