#include "lookahead_keys.h"

#include <cstdint>

#include "binary_format.h"

namespace ithaca::protocol {

namespace {

// Splits the next space-separated token off `line`. Byte loops, not find():
// tokens are a few bytes long, and a memchr call per token (two per token with
// find_first_not_of) cost more than the scan (a third of the lookahead).
std::string_view next_token(std::string_view& line) {
  const char* p = line.data();
  const char* end = p + line.size();
  while (p != end && *p == ' ') ++p;
  const char* start = p;
  while (p != end && *p != ' ') ++p;
  line = std::string_view(p, static_cast<std::size_t>(end - p));
  return std::string_view(start, static_cast<std::size_t>(p - start));
}

bool parse_size(std::string_view s, std::size_t& v) {
  if (s.empty() || s.size() > 9) return false;
  v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  return true;
}

enum class text_kind { Retrieval, Storage, OneKey, MetaSet, Unknown };

text_kind kind_of(std::string_view cmd) {
  if (cmd == "get" || cmd == "gets") return text_kind::Retrieval;
  if (cmd == "set" || cmd == "add" || cmd == "replace" || cmd == "append" || cmd == "prepend" || cmd == "cas")
    return text_kind::Storage;
  if (cmd == "mg" || cmd == "md" || cmd == "ma" || cmd == "delete" || cmd == "incr" || cmd == "decr" || cmd == "touch")
    return text_kind::OneKey;
  if (cmd == "ms") return text_kind::MetaSet;
  return text_kind::Unknown;
}

// One binary request: its key, and how many bytes it takes (0: incomplete).
std::size_t binary_request(std::string_view in, std::string_view& key) {
  if (in.size() < kBinaryHeaderSize) return 0;
  const binary_header h = decode_header(in.data());
  const std::size_t total = kBinaryHeaderSize + h.body_length;
  if (in.size() < total || h.key_length + std::size_t{h.extras_length} > h.body_length) return 0;
  key = in.substr(kBinaryHeaderSize + h.extras_length, h.key_length);
  return total;
}

}  // namespace

std::size_t lookahead_keys(std::string_view input, std::span<std::string_view> out) {
  std::size_t n = 0;
  while (n < out.size() && !input.empty()) {
    if (static_cast<std::uint8_t>(input[0]) == kBinaryRequestMagic) {
      std::string_view key;
      const std::size_t used = binary_request(input, key);
      if (used == 0) break;
      if (!key.empty()) out[n++] = key;
      input.remove_prefix(used);
      continue;
    }
    const std::size_t eol = input.find('\n');
    if (eol == std::string_view::npos) break;
    std::string_view line = input.substr(0, eol);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    input.remove_prefix(eol + 1);
    const text_kind kind = kind_of(next_token(line));
    if (kind == text_kind::Unknown) break;
    if (kind == text_kind::Retrieval) {
      for (std::string_view k = next_token(line); !k.empty() && n < out.size(); k = next_token(line)) out[n++] = k;
      continue;
    }
    const std::string_view key = next_token(line);
    if (key.empty()) break;
    out[n++] = key;
    std::size_t bytes = 0;
    if (kind == text_kind::Storage) {
      next_token(line);  // flags
      next_token(line);  // exptime
      if (!parse_size(next_token(line), bytes)) break;
    } else if (kind == text_kind::MetaSet) {
      if (!parse_size(next_token(line), bytes)) break;
    } else {
      continue;
    }
    // The data block and its "\r\n".
    if (input.size() < bytes + 2) break;
    input.remove_prefix(bytes + 2);
  }
  return n;
}

}  // namespace ithaca::protocol
