#include "backend_reply_parser.h"

#include <cstring>

namespace ithaca::protocol {
namespace {

// Strict decimal (memcached prints numbers plainly): no sign, no spaces, no
// empty token, no overflow.
bool parse_decimal(std::string_view t, std::uint64_t& out) {
  if (t.empty() || t.size() > 20) return false;
  std::uint64_t v = 0;
  for (const char c : t) {
    if (c < '0' || c > '9') return false;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

// Splits off the next space-separated word of `rest` (memcached separates
// reply words with exactly one space).
std::string_view next_word(std::string_view& rest) {
  const std::size_t sp = rest.find(' ');
  const std::string_view word = rest.substr(0, sp);
  rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp + 1);
  return word;
}

bool is_error_line(std::string_view line) {
  return line == "ERROR" || line.starts_with("ERROR ") || line.starts_with("CLIENT_ERROR") ||
         line.starts_with("SERVER_ERROR");
}

bool is_meta_line_code(std::string_view code) {
  return code == "HD" || code == "NS" || code == "EX" || code == "NF" || code == "EN" || code == "MN" || code == "ME";
}

}  // namespace

bool reply_piece::meta_flag(char letter, std::string_view& token) const {
  std::string_view rest = meta_flags;
  while (!rest.empty()) {
    const std::string_view word = next_word(rest);
    if (!word.empty() && word[0] == letter) {
      token = word.substr(1);
      return true;
    }
  }
  return false;
}

parse_status backend_reply_parser::next(std::string_view in, reply_shape shape, reply_piece& piece,
                                        std::size_t& consumed) {
  consumed = 0;
  const parse_status st = frame(in, shape, piece, consumed);
  if (st == parse_status::Error) reset();  // the connection is recycled; start clean anyway
  return st;
}

// Cuts the next piece of a backend's reply out of `in` by the shape the
// request expects (a status line, VALUE..END, meta HD/VA/EN..., an error
// line), without copying: `piece` views into `in` and `consumed` says how far
// it reaches. Incremental: NeedMore remembers how far it scanned (scanned_)
// and how much a value still needs (need_), so a reply that arrives a byte at
// a time is scanned once. Bounds: a line is at most kMaxLine (2,048) bytes
// and a value at most the live item_size_max (set_max_value), else Error
// (the connection is recycled). [the backend connection's reader coroutine,
// on its worker; no lock]
parse_status backend_reply_parser::frame(std::string_view in, reply_shape shape, reply_piece& piece,
                                         std::size_t& consumed) {
  if (need_ > in.size()) return parse_status::NeedMore;
  if (scanned_ > in.size()) scanned_ = 0;
  const std::size_t window = std::min(in.size(), kMaxLine);
  const void* nl = scanned_ < window ? std::memchr(in.data() + scanned_, '\n', window - scanned_) : nullptr;
  if (nl == nullptr) {
    if (in.size() >= kMaxLine) return parse_status::Error;  // a line this long is not memcached's
    scanned_ = in.size();
    return parse_status::NeedMore;
  }
  const auto nl_pos = static_cast<std::size_t>(static_cast<const char*>(nl) - in.data());
  if (nl_pos == 0 || in[nl_pos - 1] != '\r') return parse_status::Error;  // memcached always sends CRLF
  const std::size_t line_len = nl_pos + 1;
  const std::string_view line = in.substr(0, nl_pos - 1);

  piece = reply_piece{};
  piece.line = line;
  std::size_t total = line_len;
  std::size_t data_len = 0;
  bool has_data = false;

  if (is_error_line(line)) {
    piece.kind = piece_kind::Error;
  } else {
    switch (shape) {
      case reply_shape::Line: piece.kind = piece_kind::Line; break;
      case reply_shape::Version:
        if (!line.starts_with("VERSION ")) return parse_status::Error;
        piece.kind = piece_kind::Line;
        break;
      case reply_shape::Values:
      case reply_shape::Stats: {
        if (line == "END") {
          piece.kind = piece_kind::End;
          break;
        }
        std::string_view rest = line;
        const std::string_view word = next_word(rest);
        if (shape == reply_shape::Stats) {
          if (word != "STAT") return parse_status::Error;
          piece.kind = piece_kind::Stat;
          piece.key = next_word(rest);
          piece.data = rest;
          if (piece.key.empty()) return parse_status::Error;
          break;
        }
        if (word != "VALUE") return parse_status::Error;
        piece.kind = piece_kind::Value;
        piece.key = next_word(rest);
        std::uint64_t flags = 0;
        std::uint64_t bytes = 0;
        if (piece.key.empty() || piece.key.size() > 250) return parse_status::Error;
        if (!parse_decimal(next_word(rest), flags) || flags > UINT32_MAX) return parse_status::Error;
        if (!parse_decimal(next_word(rest), bytes) || bytes > max_value_) return parse_status::Error;
        if (!rest.empty()) {
          if (!parse_decimal(next_word(rest), piece.cas) || !rest.empty()) return parse_status::Error;
          piece.has_cas = true;
        }
        piece.flags = static_cast<std::uint32_t>(flags);
        data_len = static_cast<std::size_t>(bytes);
        has_data = true;
        break;
      }
      case reply_shape::Meta: {
        std::string_view rest = line;
        piece.code = next_word(rest);
        piece.kind = piece_kind::Meta;
        if (piece.code == "VA") {
          std::uint64_t bytes = 0;
          if (!parse_decimal(next_word(rest), bytes) || bytes > max_value_) return parse_status::Error;
          data_len = static_cast<std::size_t>(bytes);
          has_data = true;
        } else if (!is_meta_line_code(piece.code)) {
          return parse_status::Error;
        }
        piece.meta_flags = rest;
        break;
      }
    }
  }

  if (has_data) {
    total = line_len + data_len + 2;
    if (in.size() < total) {
      need_ = total;
      scanned_ = nl_pos;  // the newline is found again at once
      return parse_status::NeedMore;
    }
    if (in[total - 2] != '\r' || in[total - 1] != '\n') return parse_status::Error;
    piece.data = in.substr(line_len, data_len);
  }
  piece.raw = in.substr(0, total);
  consumed = total;
  need_ = 0;
  scanned_ = 0;
  return parse_status::Ok;
}

}  // namespace ithaca::protocol
