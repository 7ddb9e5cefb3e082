#pragma once
// The one parser a connection owns. It tells the protocols apart by the first
// byte of a request (0x80: binary; anything else: text, where classic and meta
// commands mix freely), by default fixing the protocol at the first request
// as memcached does (parser_settings::lock_protocol), and it swallows the
// bytes of refused values so the protocol parsers never see them.
//
// Contract with the connection:
//   - call parse() with all unconsumed input; drop result.consumed bytes
//     from its front whatever the status;
//   - Ok: execute `out` (its views point into the input: execute before
//     dropping the bytes, or copy), then call parse() again;
//   - NeedMore: read more bytes (append), call parse() again; bytes that
//     were not consumed must still be at the front;
//   - Error: send the error reply (unless result.silent; nothing at all
//     for LineTooLong, CrossProtocol and BadMagic), then close if result.close.
//   - Ok and Error both clear `out` first: it holds this request only, never
//     a field of the one parsed into it before (the caller need not clear it).

#include <cstddef>
#include <string_view>

#include "binary_parser.h"
#include "parse_result.h"
#include "parser_settings.h"
#include "request.h"
#include "text_parser.h"

namespace ithaca::protocol {

class parser {
 public:
  explicit parser(const parser_settings& settings)
      : settings_(settings), text_(settings_), binary_(settings_), mode_(bound_mode(settings.binding_protocol)) {}

  parse_result parse(std::string_view input, request& out);

  // A reload changed item_size_max. Takes effect at the next command line;
  // a value already accepted or being swallowed is not judged again.
  void set_item_size_max(std::size_t bytes) { settings_.item_size_max = bytes; }

  // Bytes of a refused value still to discard (tests and stats).
  std::size_t swallowing() const { return swallow_; }

  // In the middle of a request's data (a value, a binary body, or a refused
  // value being swallowed). memcached does not transmit queued replies while
  // it waits for such data, only while it waits for a command line; the
  // connection follows it so that replies it may cull are culled alike.
  bool awaiting_data() const { return swallow_ > 0 || text_.awaiting_value() || binary_.awaiting_body(); }

  // memcached's read-time rule: a text command line of which more than
  // 2048 bytes have arrived without the newline closes the connection,
  // unless it is a multiget (`get ` or `gets ` after at most 100 leading
  // spaces). `rest` is the unconsumed input after parse() said NeedMore.
  // memcached judges what one read of its 16 KiB buffer brought, so the
  // connection asks only once the socket has nothing more at once; parse()
  // itself stays independent of how the bytes were cut.
  bool closes_partial_line(std::string_view rest) const;

 private:
  enum class mode : unsigned char { Undecided, Text, Binary };
  static mode bound_mode(parser_settings::binding b) {
    return b == parser_settings::binding::Ascii    ? mode::Text
           : b == parser_settings::binding::Binary ? mode::Binary
                                                   : mode::Undecided;
  }
  // The protocol stays what the first request (or the binding) made it.
  bool locked() const {
    return settings_.lock_protocol || settings_.binding_protocol != parser_settings::binding::Negotiating;
  }

  parse_result parse_one(std::string_view input, request& out);
  parse_result parse_after_swallow(std::string_view input, request& out);

  parser_settings settings_;
  text_parser text_;
  binary_parser binary_;
  mode mode_;
  std::size_t swallow_ = 0;
};

}  // namespace ithaca::protocol
