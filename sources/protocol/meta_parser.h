#pragma once
// The meta commands (mg, ms, md, ma, mn, me) of a text line already split
// into words. Called by text_parser; the value of ms is read by the caller.

#include <cstddef>
#include <string_view>

#include "parse_result.h"
#include "parser_settings.h"
#include "request.h"

namespace ithaca::protocol {

struct meta_line {
  const std::string_view* word;  // word[0] is the command
  std::size_t stored;            // words available in `word`
  std::size_t total;             // words in the line
};

struct meta_outcome {
  enum class Status { Ok, Error, UnknownCommand };
  Status status = Status::Ok;
  error_kind kind = error_kind::None;
  std::string_view reply;
  std::size_t swallow = 0;       // ms errors after the length: value bytes to discard
  std::size_t value_length = 0;  // ms: the data length
};

meta_outcome parse_meta(std::string_view cmd, const meta_line& line, request& out, const parser_settings& settings);

}  // namespace ithaca::protocol
