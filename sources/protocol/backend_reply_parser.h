#pragma once
// Framing of a backend memcached's replies (router role). The backend speaks
// classic ascii or meta; the reply to one encoded request has a shape the
// encoder knows (backend_call::encode returns it), and this parser cuts it
// into pieces, one at a time, so a multi-value reply never has to be in
// memory whole: only the piece being returned (a VALUE line and its data).
//
// Contract (like protocol::parser's):
//   - call next() with all unconsumed input of the backend connection;
//   - Ok: `piece` is filled (views into `in`), drop `consumed` bytes after
//     using the piece; NeedMore: read more, call again with the same bytes at
//     the front (consumed is 0); Error: the backend sent garbage, the
//     connection's replies can no longer be matched: recycle it.
//   - never reads past `in`; fed one byte at a time it returns the same
//     pieces as fed all at once.
//
// Thread: the worker that owns the backend connection; no locks.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parse_result.h"

namespace ithaca::protocol {

// How the reply to one encoded backend request is framed.
enum class reply_shape : std::uint8_t {
  Line,     // one line: STORED, NOT_FOUND, DELETED, TOUCHED, OK, a number, ...
  Values,   // ascii retrieval: VALUE pieces (with data) up to END
  Stats,    // STAT lines up to END
  Meta,     // one meta reply: HD NS EX NF EN MN ME line, or VA <n> with data
  Version,  // "VERSION <text>"
};
// Every shape also accepts an error line (ERROR, CLIENT_ERROR <text>,
// SERVER_ERROR <text>) as a complete reply: piece_kind::Error.

enum class piece_kind : std::uint8_t {
  Value,  // "VALUE <key> <flags> <bytes> [<cas>]" + data: key flags cas has_cas data
  End,    // "END"
  Stat,   // "STAT <name> <value>": key = name, data = value
  Line,   // any other single line (Line and Version shapes): line
  Meta,   // a meta reply: code, meta_flags; data for VA
  Error,  // ERROR / CLIENT_ERROR ... / SERVER_ERROR ...: line
};

// One framed piece. Views into the input given to next(): valid until those
// bytes are consumed.
struct reply_piece {
  piece_kind kind = piece_kind::Line;
  std::string_view raw;   // every byte of the piece: line, CRLF, data, CRLF
  std::string_view line;  // the first line without its "\r\n"
  std::string_view key;
  std::uint32_t flags = 0;
  std::uint64_t cas = 0;
  bool has_cas = false;
  std::string_view data;
  std::string_view code;        // Meta: "HD", "VA", "EN", ...
  std::string_view meta_flags;  // Meta: the return flags after the code (and VA's size)

  // Meta: the token of return flag `letter` ("c123" -> "123"); false if absent.
  bool meta_flag(char letter, std::string_view& token) const;
  bool meta_flag(char letter) const {
    std::string_view ignored;
    return meta_flag(letter, ignored);
  }
};

class backend_reply_parser {
 public:
  // memcached's replies are short lines; a line this long without a newline is garbage.
  static constexpr std::size_t kMaxLine = 2048;
  // Largest value accepted in a reply (memcached's -I tops out at 1 GiB).
  // The router sets its own live item_size_max (set_max_value): a header
  // announcing more is a bad reply at once, before any of its data is read.
  static constexpr std::size_t kDefaultMaxValue = std::size_t{1} << 30;

  explicit backend_reply_parser(std::size_t max_value = kDefaultMaxValue) : max_value_(max_value) {}

  // Takes effect from the next header parsed (a reload may change it).
  void set_max_value(std::size_t max_value) { max_value_ = max_value; }
  std::size_t max_value() const { return max_value_; }

  parse_status next(std::string_view in, reply_shape shape, reply_piece& piece, std::size_t& consumed);

  // Forget partial progress (the connection was recycled).
  void reset() {
    scanned_ = 0;
    need_ = 0;
  }

 private:
  parse_status frame(std::string_view in, reply_shape shape, reply_piece& piece, std::size_t& consumed);

  std::size_t max_value_;
  std::size_t scanned_ = 0;  // bytes already searched for the newline
  std::size_t need_ = 0;     // bytes the current piece needs (VALUE/VA data)
};

}  // namespace ithaca::protocol
