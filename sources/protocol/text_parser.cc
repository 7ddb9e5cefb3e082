#include "text_parser.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <memory>

#include "meta_parser.h"
#include "number.h"
#include "text_replies.h"

namespace ithaca::protocol {
namespace text_detail {

// memcached tokenizes at most 24 tokens; commands that take more words than
// that are refused anyway, except multi-key gets, which are walked separately.
constexpr std::size_t kMaxTokens = 24;

struct token_list {
  // Not constructed up front: tokenize() constructs the first `stored` and
  // only those are read. (Zeroing all 24 views was 384 bytes of stores per
  // line, a third of the line parser's time on a meta `mg`.)
  union {
    std::string_view word[kMaxTokens];
  };
  std::size_t stored = 0;  // words in `word`
  std::size_t total = 0;   // words in the line
  token_list() {}
};

// A storage command's words: set add replace append prepend (Plain), cas (a
// unique after the length), lease-set (a token after the key).
enum class storage_form { None, Plain, Cas, Lease };

}  // namespace text_detail

namespace {

using text_detail::kMaxTokens;
using text_detail::storage_form;
using text_detail::token_list;

// Splits on ' ' only (memcached: tabs are part of a token), collapsing runs.
void tokenize(std::string_view line, token_list& t) {
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    if (i == line.size()) break;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (t.stored < kMaxTokens) std::construct_at(&t.word[t.stored++], line.substr(start, i - start));
    ++t.total;
  }
}

parse_result fail(error_kind kind, std::size_t consumed, std::string_view reply, bool silent = false) {
  parse_result r;
  r.status = parse_status::Error;
  r.consumed = consumed;
  r.error = kind;
  r.reply = reply;
  r.silent = silent;
  return r;
}

// An error after which the connection closes, with no reply.
parse_result fail_and_close(error_kind kind, std::size_t consumed) {
  parse_result r = fail(kind, consumed, {});
  r.close = true;
  return r;
}

// memcached's set_noreply_maybe: the last word is exactly "noreply".
bool ends_with_noreply(const token_list& t) {
  return t.total >= 2 && t.stored == t.total && t.word[t.total - 1] == "noreply";
}

// memcached (process_command_ascii) hangs up without a reply on a command it
// does not know whose last token starts with "HTTP/" ("GET / HTTP/1.1",
// "PRI * HTTP/2.0"), so a browser tricked into posting to the cache port
// cannot run the lines after it. 1.6.45's rule, to the letter: any unknown
// command of more than one word (1.6.18 spared one-byte commands and those
// whose first letter opens a command family); its tokenizer keeps 23 words,
// so that is the "last" one of a longer line.
bool http_request_line(const token_list& t) {
  constexpr std::size_t kMemcachedWords = 23;
  if (t.total < 2) return false;
  const std::size_t last = std::min(t.total, kMemcachedWords) - 1;
  return t.word[last].starts_with("HTTP/");
}

// A command memcached does not know: ERROR, or a hang-up for an HTTP line.
parse_result unknown_command(const token_list& t, std::size_t line_len, request& out) {
  out.cmd = command::Unknown;
  if (http_request_line(t)) {
    parse_result r = fail(error_kind::CrossProtocol, line_len, {});
    r.close = true;
    return r;
  }
  return fail(error_kind::UnknownCommand, line_len, kReplyError);
}

// get/gets/gat/gats: the commonest lines and the longest (a multiget), so
// they are walked once here instead of being tokenized first. `cmd` is the
// first word (a view into `line`). memcached 1.6.45's rules: at least one key
// or a bad command line; gat's first word is the exptime, a strict number;
// any key over 250 bytes refuses the line (memcached would already have sent
// the VALUEs of the keys before it; we refuse the whole line).
parse_result parse_retrieval(std::string_view line, std::string_view cmd, command kind, std::size_t line_len,
                             request& out) {
  out.proto = protocol_kind::Ascii;
  out.cmd = kind;
  const bool touches = kind == command::Gat || kind == command::Gats;
  std::size_t i = static_cast<std::size_t>(cmd.data() + cmd.size() - line.data());
  bool first = true;
  std::string_view exptime_word;
  bool key_too_long = false;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    if (i == line.size()) break;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    const std::string_view word = line.substr(start, i - start);
    if (first && touches) {
      exptime_word = word;
    } else if (word.size() > kMaxKeyLength) {
      key_too_long = true;
    } else if (!key_too_long) {
      out.keys.push_back(word);
    }
    first = false;
  }
  if (out.keys.empty() && !key_too_long) return fail(error_kind::BadFormat, line_len, kReplyBadFormat);
  if (touches) {
    auto exptime = parse_strict_i32(exptime_word);  // 1.6.45: mc_tokto32
    if (!exptime) return fail(error_kind::BadFormat, line_len, kReplyBadExptime);
    out.exptime = *exptime;
  }
  if (key_too_long) return fail(error_kind::KeyTooLong, line_len, kReplyBadFormat);
  return parse_result::ok(line_len);
}

// The retrieval command `word` names, if any.
bool retrieval_command(std::string_view word, command& kind) {
  if (word == "get")
    kind = command::Get;
  else if (word == "gets")
    kind = command::Gets;
  else if (word == "gat")
    kind = command::Gat;
  else if (word == "gats")
    kind = command::Gats;
  else
    return false;
  return true;
}

bool starts_multiget(std::string_view in) {
  std::size_t i = 0;
  while (i < in.size() && in[i] == ' ') ++i;
  if (i > 100) return false;
  const std::string_view rest = in.substr(i);
  return rest.starts_with("get ") || rest.starts_with("gets ");
}

// The storage command `cmd` names (setting out.cmd), or None.
storage_form storage_form_of(std::string_view cmd, request& out) {
  struct entry {
    std::string_view word;
    command cmd;
    storage_form form;
  };
  static constexpr entry kStorage[] = {
      {"set", command::Set, storage_form::Plain},
      {"add", command::Add, storage_form::Plain},
      {"replace", command::Replace, storage_form::Plain},
      {"append", command::Append, storage_form::Plain},
      {"prepend", command::Prepend, storage_form::Plain},
      {"cas", command::Cas, storage_form::Cas},
      {"lease-set", command::LeaseSet, storage_form::Lease},
  };
  for (const entry& e : kStorage) {
    if (cmd == e.word) {
      out.cmd = e.cmd;
      return e.form;
    }
  }
  return storage_form::None;
}

// incr, decr, delete, touch: a key and (but delete) a number. As memcached
// 1.6.45: too few words is a bad command line; words after the last one used
// are ignored ("delete a 5" deletes); the line is noreply when its last word
// is; numbers are strict (no '+', no blanks).
parse_result parse_keyed(std::string_view cmd, const token_list& t, std::size_t line_len, request& out) {
  if (cmd == "incr" || cmd == "decr") {
    out.cmd = cmd == "incr" ? command::Incr : command::Decr;
    if (t.total < 3) return fail(error_kind::BadFormat, line_len, kReplyBadFormat);
    out.noreply = ends_with_noreply(t);
    if (t.word[1].size() > kMaxKeyLength) {
      return fail(error_kind::KeyTooLong, line_len, kReplyBadFormat, out.noreply);
    }
    out.keys.push_back(t.word[1]);
    auto delta = parse_strict_u64(t.word[2]);
    if (!delta) return fail(error_kind::BadFormat, line_len, kReplyBadDelta, out.noreply);
    out.delta = *delta;
    return parse_result::ok(line_len);
  }

  if (cmd == "delete") {
    out.cmd = command::Delete;
    if (t.total < 2) return fail(error_kind::BadFormat, line_len, kReplyBadFormat);
    out.noreply = ends_with_noreply(t);
    if (t.word[1].size() > kMaxKeyLength) {
      return fail(error_kind::KeyTooLong, line_len, kReplyBadFormat, out.noreply);
    }
    out.keys.push_back(t.word[1]);
    return parse_result::ok(line_len);
  }

  if (cmd == "touch") {
    out.cmd = command::Touch;
    if (t.total < 3) return fail(error_kind::BadFormat, line_len, kReplyBadFormat);
    out.noreply = ends_with_noreply(t);
    if (t.word[1].size() > kMaxKeyLength) {
      return fail(error_kind::KeyTooLong, line_len, kReplyBadFormat, out.noreply);
    }
    out.keys.push_back(t.word[1]);
    auto exptime = parse_strict_i32(t.word[2]);
    if (!exptime) return fail(error_kind::BadFormat, line_len, kReplyBadExptime, out.noreply);
    out.exptime = *exptime;
    return parse_result::ok(line_len);
  }
  return fail(error_kind::UnknownCommand, line_len, kReplyError);  // not reached: parse_line's list
}

// flush_all, verbosity, cache_memlimit: the admin commands with a number,
// under the same rules as parse_keyed.
parse_result parse_admin_number(std::string_view cmd, const token_list& t, std::size_t line_len, request& out) {
  if (cmd == "flush_all") {
    out.cmd = command::FlushAll;
    out.noreply = ends_with_noreply(t);
    if (t.total != (out.noreply ? 2u : 1u)) {
      auto delay = parse_strict_i32(t.word[1]);  // 1.6.45: mc_tokto32
      if (!delay) return fail(error_kind::BadFormat, line_len, kReplyBadExptime, out.noreply);
      out.flush_delay = *delay;
      out.has_flush_delay = true;
    }
    return parse_result::ok(line_len);
  }

  if (cmd == "verbosity") {
    out.cmd = command::Verbosity;
    out.noreply = ends_with_noreply(t);
    auto level = t.total >= 2 ? parse_strict_u32(t.word[1]) : std::nullopt;
    if (!level) return fail(error_kind::BadFormat, line_len, kReplyBadFormat, out.noreply);
    out.verbosity = *level;
    return parse_result::ok(line_len);
  }

  if (cmd == "cache_memlimit") {
    // cache_memlimit <megabytes> [noreply]. memcached ignores a third word
    // that is not "noreply"; the bounds (8 .. 10^9) are the executor's.
    out.cmd = command::CacheMemlimit;
    if (t.total != 2 && t.total != 3) return fail(error_kind::UnknownCommand, line_len, kReplyError);
    out.noreply = ends_with_noreply(t);
    auto mb = parse_strtoul32(t.word[1]);
    if (!mb) return fail(error_kind::BadFormat, line_len, kReplyError, out.noreply);
    out.memlimit_mb = *mb;
    return parse_result::ok(line_len);
  }
  return fail(error_kind::UnknownCommand, line_len, kReplyError);  // not reached: parse_line's list
}

// The commands whose arguments are the rest of the line, left to the
// executor (version quit stats refresh_certs shutdown watch slabs lru_crawler
// lru), lease-get, and else an unknown command.
parse_result parse_rest_of_line(std::string_view line, std::string_view cmd, const token_list& t, std::size_t line_len,
                                request& out) {
  auto rest_of_line = [&]() {
    std::size_t i = static_cast<std::size_t>(cmd.data() + cmd.size() - line.data());
    while (i < line.size() && line[i] == ' ') ++i;
    std::string_view rest = line.substr(i);
    while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
    return rest;
  };
  if (cmd == "version") {
    out.cmd = command::Version;  // memcached ignores any arguments
    return parse_result::ok(line_len);
  }
  if (cmd == "quit") {
    out.cmd = command::Quit;  // closes the connection, with any arguments
    return parse_result::ok(line_len);
  }
  if (cmd == "stats") {
    out.cmd = command::Stats;
    out.args = rest_of_line();
    return parse_result::ok(line_len);
  }
  if (cmd == "refresh_certs") {
    out.cmd = command::RefreshCerts;  // memcached ignores any arguments
    return parse_result::ok(line_len);
  }
  if (cmd == "shutdown") {
    // memcached without -A answers "SERVER_ERROR: shutdown not enabled" whatever
    // the arguments; that is the executor's decision.
    out.cmd = command::Shutdown;
    out.args = rest_of_line();
    return parse_result::ok(line_len);
  }
  // Operator commands of memcached's whose answers the executor words
  // (exec_admin.cc); memcached wants at least one argument for lru.
  if (cmd == "watch" || cmd == "slabs" || cmd == "lru_crawler" || (cmd == "lru" && t.total >= 2)) {
    out.cmd = cmd == "watch"         ? command::Watch
              : cmd == "slabs"       ? command::Slabs
              : cmd == "lru_crawler" ? command::LruCrawler
                                     : command::Lru;
    out.args = rest_of_line();
    return parse_result::ok(line_len);
  }
  if (cmd == "metaget") {
    // mcrouter: metaget <key>. A hit answers
    //   META <key> age: unknown; exptime: <unix time, 0 never>; from: unknown; is_transient: 0\r\nEND\r\n
    // a miss END (see encode_metaget in reply.h).
    out.cmd = command::McMetaget;
    if (t.total != 2) return fail(error_kind::UnknownCommand, line_len, kReplyError);
    if (t.word[1].size() > kMaxKeyLength) {
      return fail(error_kind::KeyTooLong, line_len, kReplyBadFormat);
    }
    out.keys.push_back(t.word[1]);
    return parse_result::ok(line_len);
  }
  if (cmd == "lease-get") {
    // mcrouter: lease-get <key>. A hit answers like get; a miss answers
    //   LVALUE <key> <lease-token> <flags> <bytes>\r\n<data>\r\nEND\r\n
    // (see encode_lease_value in reply.h).
    out.cmd = command::LeaseGet;
    if (t.total != 2) return fail(error_kind::UnknownCommand, line_len, kReplyError);
    if (t.word[1].size() > kMaxKeyLength) {
      return fail(error_kind::KeyTooLong, line_len, kReplyBadFormat);
    }
    out.keys.push_back(t.word[1]);
    return parse_result::ok(line_len);
  }

  return unknown_command(t, line_len, out);
}

}  // namespace

parse_result text_parser::parse(std::string_view input, request& out) {
  if (need_ > input.size()) return parse_result::need_more();
  if (scanned_ > input.size()) scanned_ = 0;

  // A line, newline included, may be max_line_length bytes long (a
  // multiget max_get_line_length): its newline must be among the first
  // `limit` bytes. Whether it is a multiget is known from the line's first
  // bytes, long before the limit matters, and once known stays so as more
  // bytes arrive; so the answer does not depend on how the line was cut.
  // (Asked only once the short limit is reached: a line trickling in byte
  // by byte costs no rescan of its start per byte.)
  std::size_t limit = settings_.max_line_length;
  if (input.size() >= limit && starts_multiget(input)) limit = settings_.max_get_line_length;
  const std::size_t window = std::min(input.size(), limit);
  const void* nl = scanned_ < window ? std::memchr(input.data() + scanned_, '\n', window - scanned_) : nullptr;
  if (nl == nullptr) {
    scanned_ = window;
    if (input.size() >= limit) {
      scanned_ = 0;
      out.clear();
      return fail_and_close(error_kind::LineTooLong, input.size());
    }
    return parse_result::need_more();
  }
  const std::size_t nl_pos = static_cast<std::size_t>(static_cast<const char*>(nl) - input.data());
  const std::size_t line_len = nl_pos + 1;
  std::string_view line = input.substr(0, nl_pos);
  // "\r\n" or a bare "\n" ends a line; only one '\r' is stripped
  // ("get a\r\r\n" asks for the key "a\r").
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // A NUL is a byte like any other (memcached 1.6.45 tokenizes by length;
  // 1.6.18 read the line as a C string and dropped what followed a NUL).

  out.clear();
  // Done with this line unless parse_line waits for its value (await_value).
  need_ = 0;
  scanned_ = 0;
  // Every return here is a prvalue, built in the caller's slot: a named
  // result copied out stalled on store forwarding (5% of a pipelined get).
  return parse_line(input, line, line_len, out);
}

// The line is whole and its value is not: wait for `need` bytes in all.
// scanned_ stays at the line's end, so its newline is found again at once.
parse_result text_parser::await_value(std::size_t need, std::size_t line_len) {
  need_ = need;
  scanned_ = line_len - 1;
  return parse_result::need_more();
}

// A meta command's line (two letters starting with 'm', parse_meta's), and
// an ms's value behind it: NeedMore until it is all there, a bad data chunk
// without its CRLF. Not a meta command: unknown_command. [as parse_line]
parse_result text_parser::parse_meta_line(std::string_view input, std::string_view cmd, const token_list& t,
                                          std::size_t line_len, request& out) {
  out.proto = protocol_kind::Meta;
  meta_line ml{t.word, t.stored, t.total};
  meta_outcome m = parse_meta(cmd, ml, out, settings_);
  if (m.status == meta_outcome::Status::UnknownCommand) {
    out.proto = protocol_kind::Ascii;
    return unknown_command(t, line_len, out);
  }
  if (m.status == meta_outcome::Status::Error) {
    // Meta errors are never hidden by 'q' (memcached out_errstring).
    parse_result r = fail(m.kind, line_len, m.reply);
    r.swallow = m.swallow;
    return r;
  }
  if (out.cmd != command::MetaSet) return parse_result::ok(line_len);
  const std::size_t need = line_len + m.value_length + 2;
  if (input.size() < need) return await_value(need, line_len);
  if (input[need - 2] != '\r' || input[need - 1] != '\n') {
    return fail(error_kind::BadDataChunk, need, kReplyBadDataChunk);
  }
  out.value = input.substr(line_len, m.value_length);
  return parse_result::ok(need);
}

// A storage command's line (set add replace append prepend cas lease-set,
// `form` says which words it has) and its value behind it, with memcached
// 1.6.45's checks: a bad length refuses the line alone, a later error
// swallows the value too, a value over item_size_max is swallowed.
// [as parse_line]
parse_result text_parser::parse_storage(std::string_view input, storage_form form, const token_list& t,
                                        std::size_t line_len, request& out) {
  // set key flags exptime bytes [noreply]; cas adds casunique; lease-set
  // (mcrouter) puts the lease token after the key:
  //   lease-set <key> <token> <flags> <exptime> <bytes> [noreply]
  // As memcached 1.6.45: the length must be there and be a strict number,
  // or the line is a bad command line and nothing is swallowed (its
  // tokenizer); once the length is known every later error swallows the
  // data; words after the last one used are ignored, and the line is
  // noreply when its last word is.
  const std::size_t f = form == storage_form::Lease ? 3 : 2;
  if (t.total < f + 3) return fail(error_kind::BadFormat, line_len, kReplyBadFormat);
  auto vlen = parse_strict_i32(t.word[f + 2]);
  if (!vlen || *vlen < 0 || *vlen > INT_MAX - 2) {
    return fail(error_kind::BadFormat, line_len, kReplyBadFormat);
  }
  const auto value_len = static_cast<std::size_t>(*vlen);
  out.noreply = ends_with_noreply(t);
  const bool silent = out.noreply;
  auto refuse = [&](error_kind kind) {
    parse_result r = fail(kind, line_len, kReplyBadFormat, silent);
    r.swallow = value_len + 2;
    return r;
  };
  if (t.word[1].size() > kMaxKeyLength) return refuse(error_kind::KeyTooLong);
  out.keys.push_back(t.word[1]);
  if (form == storage_form::Lease) {
    auto token = parse_u64(t.word[2]);
    if (!token) return refuse(error_kind::BadFormat);
    out.lease_token = *token;
  }
  // memcached: safe_strtoflags and safe_strtol (32-bit truncation: "-0" is fine).
  auto flags = parse_flags(t.word[f]);
  auto exptime = parse_i32(t.word[f + 1]);
  if (!flags || !exptime) return refuse(error_kind::BadFormat);
  out.flags = *flags;
  out.exptime = *exptime;
  if (form == storage_form::Cas) {
    // The unique is the sixth word, a strict number ("noreply" there is not).
    auto cas = t.total > 5 && t.stored > 5 ? parse_strict_u64(t.word[5]) : std::nullopt;
    if (!cas) return refuse(error_kind::BadFormat);
    out.cas = *cas;
  }
  if (value_len > settings_.item_size_max) {
    // memcached swallows the value (and, for set, unlinks the old item:
    // the executor does that, the key is in `out`).
    parse_result r = fail(error_kind::TooLarge, line_len, kReplyTooLarge, silent);
    r.swallow = value_len + 2;
    return r;
  }
  const std::size_t need = line_len + value_len + 2;
  if (input.size() < need) return await_value(need, line_len);
  if (input[need - 2] != '\r' || input[need - 1] != '\n') {
    // memcached reads exactly bytes+2 and resumes parsing right after.
    return fail(error_kind::BadDataChunk, need, kReplyBadDataChunk, silent);
  }
  out.value = input.substr(line_len, value_len);
  return parse_result::ok(need);
}

// One complete text line (classic or meta; retrievals are handed to
// parse_retrieval first) into `out`: the command by its first word, then its
// arguments with memcached's exact checks and error replies, by family
// (parse_meta_line, parse_storage, parse_keyed, parse_admin_number,
// parse_rest_of_line); a store command's value is read from `input` behind
// the line (or NeedMore, or swallowed when too large). Every family returns
// its result as a prvalue, built in the caller's slot. [the connection's
// coroutine; pure, no lock]
parse_result text_parser::parse_line(std::string_view input, std::string_view line, std::size_t line_len,
                                     request& out) {
  {
    std::size_t i = 0;
    while (i < line.size() && line[i] == ' ') ++i;
    std::size_t e = i;
    while (e < line.size() && line[e] != ' ') ++e;
    command kind;
    if (retrieval_command(line.substr(i, e - i), kind)) {
      return parse_retrieval(line, line.substr(i, e - i), kind, line_len, out);
    }
  }
  // memcached 1.6.45 refuses a line shorter than a two-letter command and its
  // newline (" \n", "\r\n", "mn\n") as a bad command line; 1.6.18 said ERROR.
  if (line_len < 4) return fail(error_kind::BadFormat, line_len, kReplyBadFormat);
  token_list t;
  tokenize(line, t);
  if (t.total == 0) return fail(error_kind::UnknownCommand, line_len, kReplyError);
  const std::string_view cmd = t.word[0];
  out.proto = protocol_kind::Ascii;
  if (cmd.size() == 2 && cmd[0] == 'm') return parse_meta_line(input, cmd, t, line_len, out);
  const storage_form form = storage_form_of(cmd, out);
  if (form != storage_form::None) return parse_storage(input, form, t, line_len, out);
  if (cmd == "incr" || cmd == "decr" || cmd == "delete" || cmd == "touch") return parse_keyed(cmd, t, line_len, out);
  if (cmd == "flush_all" || cmd == "verbosity" || cmd == "cache_memlimit")
    return parse_admin_number(cmd, t, line_len, out);
  return parse_rest_of_line(line, cmd, t, line_len, out);
}

}  // namespace ithaca::protocol
