#include "ascii_auth.h"

#include <cstdint>

namespace ithaca::protocol {

namespace {

// mcmc_toktou32: decimal digits only, at most 11 of them, within 32 bits.
bool token_u32(std::string_view t, uint32_t& out) {
  if (t.empty() || t.size() > 11) return false;
  uint64_t sum = 0;
  for (char c : t) {
    if (c < '0' || c > '9') return false;
    sum = sum * 10 + static_cast<uint64_t>(c - '0');
    if (sum > UINT32_MAX) return false;
  }
  out = static_cast<uint32_t>(sum);
  return true;
}

// The 5th space-separated token of `line` (memcached's tokenizer: runs of
// spaces separate, nothing else does); false when it has fewer than 5.
bool fifth_token(std::string_view line, std::string_view& out) {
  std::size_t count = 0;
  std::size_t at = 0;
  while (at < line.size()) {
    at = line.find_first_not_of(' ', at);
    if (at == std::string_view::npos) break;
    std::size_t end = line.find(' ', at);
    if (end == std::string_view::npos) end = line.size();
    if (count == 4) {
      out = line.substr(at, end - at);
      return true;
    }
    ++count;
    at = end;
  }
  return false;
}

ascii_auth_step reply(std::string_view text, std::size_t consumed) {
  ascii_auth_step s;
  s.what = ascii_auth_step::kind::Reply;
  s.reply = text;
  s.consumed = consumed;
  return s;
}

}  // namespace

ascii_auth_step next_ascii_auth(std::string_view input) {
  ascii_auth_step step;
  if (input.size() < 3) return step;  // NeedMore
  const std::size_t nl = input.find('\n');
  if (nl == std::string_view::npos) {
    if (input.size() > kAsciiAuthNoNewlineMax) step.what = ascii_auth_step::kind::Close;
    return step;
  }
  if (nl < kAsciiAuthLineMin) {
    step.what = ascii_auth_step::kind::Close;
    return step;
  }
  // What memcached's tokenizer reads of the line: it assumes the line ends
  // in \r\n or \n and leaves out one or two bytes before the \n accordingly.
  const std::size_t end = input[nl - 2] == '\r' ? nl - 2 : nl - 1;
  const std::string_view line = input.substr(0, end);
  const std::size_t line_used = nl + 1;
  std::string_view size_token;
  uint32_t size = 0;
  if (!line.starts_with("set") || !fifth_token(line, size_token) || !token_u32(size_token, size)) {
    return reply(kReplyUnauthenticated, line_used);
  }
  if (size > kAsciiAuthTokenMax) return reply(kReplyAuthTokenTooLong, line_used);
  const std::size_t value_len = std::size_t{size} + 2;
  if (input.size() - line_used < value_len) return step;  // NeedMore: the line is read again
  const std::string_view value = input.substr(line_used, value_len);
  const std::size_t used = line_used + value_len;
  if (value.substr(value_len - 2) != "\r\n") return reply(kReplyAuthBadTermination, used);
  const std::size_t space = value.find(' ');
  if (space == std::string_view::npos) return reply(kReplyAuthBadFormat, used);
  step.what = ascii_auth_step::kind::Check;
  step.consumed = used;
  step.user = value.substr(0, space);
  step.password = value.substr(space + 1, value_len - 2 - (space + 1));
  return step;
}

}  // namespace ithaca::protocol
