#pragma once
// Incremental parser for binary-protocol requests. Lengths come from the
// client and are checked before anything is trusted: keys and extras must fit
// in the body, extras must have the size the opcode wants, and values above
// item_size_max are refused and swallowed without being buffered. The checks
// and their replies follow memcached 1.6.18 (tests/unit/protocol/oracle/).

#include <cstddef>
#include <string_view>

#include "parse_result.h"
#include "parser_settings.h"
#include "request.h"

namespace ithaca::protocol {

class binary_parser {
 public:
  explicit binary_parser(const parser_settings& settings) : settings_(settings) {}

  parse_result parse(std::string_view input, request& out);

  // A header was read and the packet's body is still incomplete.
  bool awaiting_body() const { return need_ != 0; }

 private:
  // parse's refusals of a body it will not hold (binary_parser.cc).
  parse_result refuse_sasl(std::string_view input, std::size_t key_end, std::size_t key_len, std::size_t data_len);
  parse_result refuse_value(std::string_view input, std::size_t key_end, std::size_t key_len, std::size_t value_len,
                            request& out);

  const parser_settings& settings_;
  std::size_t need_ = 0;  // bytes the current packet needs; NeedMore below it
};

}  // namespace ithaca::protocol
