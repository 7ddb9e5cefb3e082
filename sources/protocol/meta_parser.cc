#include "meta_parser.h"

#include <algorithm>
#include <climits>
#include <span>

#include "base64.h"
#include "number.h"
#include "text_replies.h"

namespace ithaca::protocol {
namespace {

meta_outcome meta_error(error_kind kind, std::string_view reply, std::size_t swallow = 0) {
  meta_outcome m;
  m.status = meta_outcome::Status::Error;
  m.kind = kind;
  m.reply = reply;
  m.swallow = swallow;
  return m;
}

// Result of the flag pass, mirroring memcached 1.6.18's _meta_flag_preparse:
// an unknown or repeated flag stops at once; a bad token records its message
// and the pass goes on, so the last such message wins ("mg foo T b" reports
// the key decoding error, "mg foo b T" the bad token).
struct flag_pass {
  bool ok = true;
  std::string_view reply;
};

// A flag's number token: there and strict (`parse`), stored in `to`; else
// false, and `bad` (when the flag has a message) is the pass's latest.
template <typename Parse, typename T>
bool number_flag(std::string_view arg, Parse parse, T& to, std::string_view bad, std::string_view& last) {
  const auto v = arg.empty() ? decltype(parse(arg)){} : parse(arg);
  if (!v) {
    if (!bad.empty()) last = bad;
    return false;
  }
  to = *v;
  return true;
}

// b: the key is base64; decoded into out.scratch, the request's key then.
bool key_flag(request& out, std::string_view& last) {
  auto n = base64_decode(out.keys.front(), std::span<char>(out.scratch));
  if (!n) {
    last = kReplyBadKeyEncoding;
    return false;
  }
  out.keys.set(0, std::string_view(out.scratch.data(), *n));
  out.meta_key_binary = true;
  return true;
}

// One flag `o` of token `tok` into out.meta (or the key, for b). Returns
// false for a bad token, with `last` set to its message if it has one;
// `invalid` for a letter that is no flag.
bool read_flag(char o, std::string_view tok, request& out, std::string_view& last, bool& invalid) {
  meta_flags& m = out.meta;
  const std::string_view arg = tok.substr(1);
  const auto i32 = [](std::string_view t) { return parse_strict_i32(t); };  // 1.6.45: mcmc_token_get_flag_arg_32
  const auto u32 = [](std::string_view t) { return parse_strict_u32(t); };
  const auto u64 = [](std::string_view t) { return parse_strict_u64(t); };
  // Digits and punctuation have no bit; they are all invalid flags below.
  switch (o) {
    case 'b': return key_flag(out, last);
    case 'N': return number_flag(arg, i32, m.vivify_ttl, kReplyBadToken, last);
    case 'T': return number_flag(arg, i32, m.ttl, kReplyBadToken, last);
    case 'R': return number_flag(arg, i32, m.recache_ttl, kReplyBadToken, last);
    case 'F':
      return number_flag(arg, u32, m.client_flags, {}, last);  // memcached sets no message here
    // E (explicit new CAS) is not in 1.6.18, which answers "invalid
    // flag"; 1.6.45 accepts it, and so do we.
    case 'C': return number_flag(arg, u64, m.compare_cas, kReplyBadToken, last);
    case 'E': return number_flag(arg, u64, m.explicit_cas, kReplyBadToken, last);
    case 'J': return number_flag(arg, u64, m.initial, kReplyBadInitial, last);
    case 'D': return number_flag(arg, u64, m.delta, kReplyBadDeltaValue, last);
    case 'M':
      // 1.6.45 takes the byte after M, whatever follows it ("MII" is I);
      // a bare M has none: an invalid mode, reported by the command.
      m.mode = tok.size() > 1 ? tok[1] : ' ';
      return true;
    case 'O': m.opaque = arg; return true;
    // Flags without a token (any trailing bytes are ignored, as memcached does).
    case 'P':
    case 'L':  // proxy hints: accepted and ignored
    case 'k':
    case 's':
    case 't':
    case 'c':
    case 'f':
    case 'v':
    case 'h':
    case 'l':
    case 'u':
    case 'q':
    case 'I':
    case 'x':  // md: empty the value, keep the item (memcached 1.6.45)
      return true;
    default: invalid = true; return false;
  }
}

// The flags of one meta line, from word `first` on, into out.meta: one bit
// per letter, tokens kept as views into the line, each checked as memcached
// 1.6.18 checks it (read_flag; an unknown or repeated flag stops at once; a
// bad token records its message and the pass goes on, so the last message
// wins, as there). [the connection's coroutine; pure, no lock] At most the
// line's words, which the caller bounds (20: "options flags are too long").
flag_pass parse_flags_into(const meta_line& line, std::size_t first, request& out) {
  flag_pass p;
  // Default message for a failure that sets none (a bad F token).
  std::string_view last = kReplyBadFormat;
  meta_flags& m = out.meta;
  for (std::size_t i = first; i < line.total; ++i) {
    const std::string_view tok = line.word[i];
    const char o = tok[0];
    if (static_cast<unsigned char>(o) >= 127 || m.has(o)) {
      return {false, kReplyDuplicateFlag};
    }
    bool invalid = false;
    if (!read_flag(o, tok, out, last, invalid)) {
      if (invalid) return {false, kReplyInvalidFlag};
      p.ok = false;
    }
    m.set(o);
    if (m.order_size < m.order.size()) m.order[m.order_size++] = o;
  }
  if (!p.ok) p.reply = last;
  return p;
}

bool opaque_too_long(const request& out) {
  return out.meta.has('O') && out.meta.opaque.size() + 1 > kMetaMaxOpaqueToken;
}

}  // namespace

namespace {

// memcached 1.6.45's tokenizer: a flag word (from `first` on, within the words
// it looks at) that starts with a byte outside 'A'..'z' and is not a digit
// fails the whole line.
bool tokenizer_refuses(const meta_line& line, std::size_t first) {
  const std::size_t n = std::min({line.total, line.stored, kMetaTokenizedWords});
  for (std::size_t i = first; i < n; ++i) {
    const auto c = static_cast<unsigned char>(line.word[i][0]);
    if (!(c > 64 && c < 123) && !(c >= '0' && c <= '9')) return true;
  }
  return false;
}

}  // namespace

// A meta command (mg ms md ma mn me) of a line already split into words:
// the command, its key (base64-decoded into the request's scratch with `b`)
// and flags into `out`, or the exact error memcached 1.6.45 sends and whether the
// connection goes on. `ms`'s value is read by the caller (text_parser), which
// knows the input. [the connection's coroutine; pure, no lock]
meta_outcome parse_meta(std::string_view cmd, const meta_line& line, request& out, const parser_settings& settings) {
  const char c = cmd[1];
  if (c == 'n') {
    out.cmd = command::MetaNoop;  // "mn" answers MN whatever follows
    return {};
  }
  if (c != 'g' && c != 's' && c != 'd' && c != 'a' && c != 'e') {
    return {meta_outcome::Status::UnknownCommand};
  }
  // memcached 1.6.45: a meta command without its key (or ms without its
  // length), or with a flag word its tokenizer refuses, is a bad command
  // line, answered before anything else (1.6.18 said ERROR to "mg").
  const std::size_t first_flag = c == 's' ? 3 : 2;
  if (line.total < first_flag || tokenizer_refuses(line, first_flag)) {
    return meta_error(error_kind::BadFormat, kReplyBadFormat);
  }
  if (c == 'e') {
    out.cmd = command::MetaDebug;
    if (line.word[1].size() > kMaxKeyLength) {
      return meta_error(error_kind::BadFormat, kReplyBadFormat);
    }
    out.keys.push_back(line.word[1]);
    // "me <base64> b": 1.6.45 decodes only when a fourth word follows
    // ("me a2V5 b x"); with three words it looks the encoded text up as is.
    if (line.total >= 4 && line.stored >= 3 && line.word[2] == "b") {
      auto n = base64_decode(line.word[1], std::span<char>(out.scratch));
      if (!n) return meta_error(error_kind::BadFormat, kReplyBadFormat);
      out.keys.set(0, std::string_view(out.scratch.data(), *n));
      out.meta_key_binary = true;
    }
    return {};
  }
  out.cmd = c == 'g'   ? command::MetaGet
            : c == 's' ? command::MetaSet
            : c == 'd' ? command::MetaDelete
                       : command::MetaArithmetic;
  const bool key_too_long = line.word[1].size() > kMaxKeyLength;
  out.keys.push_back(key_too_long ? line.word[1].substr(0, kMaxKeyLength) : line.word[1]);

  if (c == 's') {
    auto vlen = parse_strict_i32(line.word[2]);  // 1.6.45: mcmc_token_get_32
    if (!vlen || *vlen < 0 || *vlen > INT_MAX - 2) {
      return meta_error(error_kind::BadFormat, kReplyBadFormat);
    }
    const auto value_len = static_cast<std::size_t>(*vlen);
    const std::size_t swallow = value_len + 2;
    // From here on memcached knows the length and swallows the value on error.
    if (key_too_long) return meta_error(error_kind::KeyTooLong, kReplyBadFormat, swallow);
    if (line.total > kMetaMaxWords) return meta_error(error_kind::BadFormat, kReplyFlagsTooLong, swallow);
    flag_pass p = parse_flags_into(line, 3, out);
    if (!p.ok) return meta_error(error_kind::BadFormat, p.reply, swallow);
    switch (out.meta.mode) {
      case 0:
      case 'E':
      case 'A':
      case 'P':
      case 'R':
      case 'S': break;
      default: return meta_error(error_kind::BadFormat, kReplyMsMode, swallow);
    }
    if (value_len > settings.item_size_max) {
      return meta_error(error_kind::TooLarge, kReplyTooLarge, swallow);
    }
    if (opaque_too_long(out)) return meta_error(error_kind::BadFormat, kReplyOpaqueTooLong, swallow);
    out.flags = out.meta.client_flags;
    out.exptime = out.meta.ttl;
    out.cas = out.meta.compare_cas;
    out.noreply = out.meta.has('q');
    meta_outcome m;
    m.value_length = value_len;
    return m;
  }

  // ma reports every flag problem with one message; mg and md say which.
  if (key_too_long) {
    return meta_error(error_kind::KeyTooLong, c == 'a' ? kReplyInvalidOrDuplicateFlag : kReplyBadFormat);
  }
  if (line.total > kMetaMaxWords) {
    return meta_error(error_kind::BadFormat, c == 'a' ? kReplyInvalidOrDuplicateFlag : kReplyFlagsTooLong);
  }
  flag_pass p = parse_flags_into(line, 2, out);
  if (!p.ok) {
    return meta_error(error_kind::BadFormat, c == 'a' ? kReplyInvalidOrDuplicateFlag : p.reply);
  }
  if (c == 'a') {
    switch (out.meta.mode) {
      case 0:
      case 'I':
      case '+':
      case 'D':
      case '-': break;
      default: return meta_error(error_kind::BadFormat, kReplyMaMode);
    }
    out.delta = out.meta.delta;
    out.initial = out.meta.initial;
  }
  if (opaque_too_long(out)) return meta_error(error_kind::BadFormat, kReplyOpaqueTooLong);
  out.exptime = out.meta.ttl;
  out.cas = out.meta.compare_cas;
  out.noreply = out.meta.has('q');
  return {};
}

}  // namespace ithaca::protocol
