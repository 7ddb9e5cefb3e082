#include "ack_reader.h"

#include <algorithm>
#include <cstring>

#include "binary_format.h"

namespace ithaca::replication {

ack_reader::status ack_reader::feed(std::string_view in, uint64_t& confirmed) {
  if (!error_.empty()) return status::Error;
  while (!in.empty()) {
    if (have_ == 0) {
      // Heartbeats until the next packet starts.
      const size_t start = in.find(static_cast<char>(protocol::kBinaryResponseMagic));
      if (start == std::string_view::npos) return status::Ok;
      in.remove_prefix(start);
    }
    const size_t take = std::min(kAckSize - have_, in.size());
    std::memcpy(packet_ + have_, in.data(), take);
    have_ += take;
    in.remove_prefix(take);
    if (have_ < kAckSize) return status::Ok;
    have_ = 0;
    const protocol::binary_header h = protocol::decode_header(packet_);
    if (h.opcode != static_cast<uint8_t>(protocol::opcode::Noop) || h.body_length != 0 || h.vbucket_or_status != 0) {
      error_ = "sent a packet that is not a confirmation (opcode " + std::to_string(h.opcode) + ")";
      return status::Error;
    }
    confirmed = std::max(confirmed, h.cas);
  }
  return status::Ok;
}

}  // namespace ithaca::replication
