// The slave's side of the replication stream: an incremental decoder of the
// SetQ / Touch / DeleteQ packets record.h describes. Bytes may arrive in any
// pieces; one at a time decodes the same records as all at once. Anything else
// (wrong magic, another opcode, extras or key lengths that do not fit the
// opcode, a value over the limit) is an Error: the slave drops the connection
// and resyncs, since a stream it cannot follow cannot be trusted further.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ithaca::replication {

// Ack: the master asks for a confirmation of `position` (record.h).
enum class record_kind : uint8_t { Set, Touch, Delete, Ack };

struct record {
  record_kind kind = record_kind::Set;
  std::string_view key;
  uint32_t flags = 0;
  uint32_t exptime = 0;  // wire exptime (memcached rules; yrmcds sends absolute)
  std::string_view value;
  uint64_t position = 0;  // Ack
};

enum class decode_status : uint8_t {
  Ok,        // `out` holds a record (views valid until the next call)
  NeedMore,  // every input byte was taken; feed more
  Error,     // garbage: error() says what; the decoder stays in error
};

class stream_decoder {
 public:
  explicit stream_decoder(size_t max_value) : max_value_(max_value) {}

  // Takes bytes from the front of `in` (advancing it) until one record is
  // complete or `in` is empty. A record wholly inside `in` is decoded in
  // place; a record split across calls is gathered in the decoder's buffer.
  decode_status next(std::string_view& in, record& out);

  const std::string& error() const { return error_; }
  // Bytes of an incomplete record held so far.
  size_t buffered() const { return buffer_.size(); }

 private:
  // Checks a header; returns the packet's total size, or 0 with error_ set.
  size_t check_header(const char* h);
  void decode(const char* packet, record& out) const;

  size_t max_value_;
  std::string buffer_;        // a packet gathered across calls
  bool buffer_done_ = false;  // buffer_ held the record returned last time
  std::string error_;
};

}  // namespace ithaca::replication
