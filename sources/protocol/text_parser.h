#pragma once
// Incremental parser for the text protocols: classic ascii and meta share a
// connection and are told apart by the command word. It never reads past
// `input`, never needs a value in one piece before the whole of it is there
// (it answers NeedMore and remembers how many bytes it is waiting for, so a
// value trickling in byte by byte costs no rescans), and reproduces
// memcached 1.6.18's replies, which were captured from a live server
// (tests/unit/protocol/oracle/).

#include <cstddef>
#include <string_view>

#include "parse_result.h"
#include "parser_settings.h"
#include "request.h"

namespace ithaca::protocol {

namespace text_detail {
struct token_list;  // a line's words (text_parser.cc)
enum class storage_form;
}  // namespace text_detail

class text_parser {
 public:
  explicit text_parser(const parser_settings& settings) : settings_(settings) {}

  // Parses one request from the front of `input` into `out`.
  parse_result parse(std::string_view input, request& out);

  // A command line was read and its value is still incomplete.
  bool awaiting_value() const { return need_ != 0; }

 private:
  parse_result parse_line(std::string_view input, std::string_view line, std::size_t line_len, request& out);
  parse_result await_value(std::size_t need, std::size_t line_len);
  // parse_line's families that read a value behind the line (text_parser.cc).
  parse_result parse_meta_line(std::string_view input, std::string_view cmd, const text_detail::token_list& t,
                               std::size_t line_len, request& out);
  parse_result parse_storage(std::string_view input, text_detail::storage_form form, const text_detail::token_list& t,
                             std::size_t line_len, request& out);

  const parser_settings& settings_;
  // Bytes the current request needs in total; parse() answers NeedMore at
  // once while the input is shorter. 0 when unknown.
  std::size_t need_ = 0;
  // Bytes already searched for a newline (they hold none).
  std::size_t scanned_ = 0;
};

}  // namespace ithaca::protocol
