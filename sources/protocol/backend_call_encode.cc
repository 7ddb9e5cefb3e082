// backend_call, its requests: a client request (or the current step of a multi-step one)
// as the backend's get lines, mg lines, or one ascii or meta command. Which backend command
// serves which client command is tabled in INTERNALS.md ("The router codec").
#include "text_replies.h"
#include "backend_call.h"

#include "command_class.h"

#include "backend_encode.h"
#include "number.h"
#include "backend_call_conventions.h"

namespace ithaca::protocol {
namespace {

using call_detail::kLeaseTokenTag;
using call_detail::kNoVivify;

// memcached closes a connection that sends more than 2048 bytes without a
// newline unless the line starts with "get " or "gets "; gat lines are not
// spared, so every retrieval line is kept below that.
constexpr std::size_t kMaxGetLine = 2000;
// lease-get over meta: how long the placeholder a miss creates (mg N) lives,
// i.e. how long other readers are told to wait: the store's default lease_interval.
constexpr std::int64_t kLeaseTtl = 10;

// An exptime (or flush delay) in the form the backend's text and meta
// parsers give the client's meaning. memcached 1.6 reads a binary exptime as
// an unsigned 32-bit number: 0, up to 30 days relative, else an absolute
// unix time, so 2^31 and above is a time between 2038 and 2106 (the item
// lives; Dalli's absolute times in the past expire it, as in text). Text and
// meta read theirs as a signed 32-bit number, where 2^31 and above wraps
// negative: expired on arrival. No text or meta form reaches past 2038, so a
// binary time from 2^31 on becomes the latest one they can say, 2^31-1 (the
// item lives for years either way). Below 2^31 all three mean the same, and
// text and meta TTLs were already read as memcached reads them (parse_i32).
std::int64_t backend_exptime(const request& req, std::int64_t exptime) {
  constexpr std::int64_t kLatestText = 0x7fffffff;
  if (req.proto == protocol_kind::Binary && exptime > kLatestText) return kLatestText;
  return exptime;
}

}  // namespace

// ---- encode -----------------------------------------------------------------

reply_shape backend_call::encode(std::string& out) {
  const request& req = *req_;
  switch (step_) {
    case step::AsciiGet: encode_get_lines(out); return reply_shape::Values;
    case step::MetaGet: encode_mg_lines(out); return reply_shape::Meta;
    case step::Single:
    case step::IncrRetry: return encode_single(out);
    case step::Passthrough: append_meta_passthrough(out, req); return reply_shape::Meta;
    case step::QuietPassthrough:
      // q hides the nominal reply: mn marks where the reply ends.
      append_meta_passthrough(out, req);
      out += "mn\r\n";
      return reply_shape::Meta;
    case step::IncrAdd: {
      // memcached's binary incr creates the item with flags 0 and the
      // initial value in decimal.
      std::string digits;
      append_decimal(digits, req.initial);
      append_ascii_store(out, "add", req.key(), 0, backend_exptime(req, req.exptime), digits);
      return reply_shape::Line;
    }
    case step::FetchCas:
      out += "gets ";
      out.append(req.key());
      out += "\r\n";
      return reply_shape::Values;
    case step::Done: break;
  }
  return reply_shape::Line;
}

// get/gets/gat/gats over this call's keys, as many lines as kMaxGetLine needs.
void backend_call::encode_get_lines(std::string& out) {
  const request& req = *req_;
  line_verb_ = request_verb();
  const bool touch = line_verb_ == line_verb::Touch;
  const bool cas = with_cas();
  const std::string_view verb = touch ? (cas ? "gats" : "gat") : (cas ? "gets" : "get");
  std::size_t i = 0;
  while (i < key_count()) {
    const std::size_t line_start = out.size();
    last_line_start_ = line_start;
    out.append(verb);
    if (touch) {
      out += ' ';
      append_signed(out, backend_exptime(req, req.exptime));
    }
    std::size_t in_line = 0;
    while (i < key_count()) {
      const std::string_view key = req.keys[key_index(i)];
      if (in_line > 0 && out.size() - line_start + 1 + key.size() > kMaxGetLine) break;
      out += ' ';
      out.append(key);
      ++in_line;
      ++i;
    }
    out += "\r\n";
    ++lines_;
  }
}

// The get line's verb for this request: with cas for gets/gats, binary
// clients (their replies carry CAS) and meta `c`; touching for gat/gats,
// binary touch and meta `T`.
bool backend_call::with_cas() const {
  const request& req = *req_;
  if (req.proto == protocol_kind::Meta) return req.meta.has('c');
  return req.cmd == command::Gets || req.cmd == command::Gats || binary_;
}

backend_call::line_verb backend_call::request_verb() const {
  const request& req = *req_;
  const bool touch = req.proto == protocol_kind::Meta
                         ? req.meta.has('T')
                         : req.cmd == command::Gat || req.cmd == command::Gats || req.cmd == command::Touch;
  if (touch) return line_verb::Touch;
  return with_cas() ? line_verb::Gets : line_verb::Get;
}

bool backend_call::join_line(backend_call& prev, std::string& out) {
  if (step_ != step::AsciiGet || !prev.line_open()) return false;
  const request& req = *req_;
  const line_verb verb = request_verb();
  if (verb == line_verb::Touch || verb != prev.line_verb_) return false;
  std::size_t line = out.size() - prev.last_line_start_;  // with its "\r\n"
  for (std::size_t i = 0; i < key_count(); ++i) line += 1 + req.keys[key_index(i)].size();
  if (line - 2 > kMaxGetLine) return false;
  out.resize(out.size() - 2);
  for (std::size_t i = 0; i < key_count(); ++i) {
    out += ' ';
    out.append(req.keys[key_index(i)]);
  }
  out += "\r\n";
  line_verb_ = prev.line_verb_;
  last_line_start_ = prev.last_line_start_;
  lines_ = 1;
  prev.joined_next_ = true;
  return true;
}

// One mg per key: classic and binary retrievals and lease-get over meta.
void backend_call::encode_mg_lines(std::string& out) {
  const request& req = *req_;
  if (op_ == op::Metaget) {  // mcrouter's metaget: the remaining TTL only
    out += "mg";
    if (append_meta_key(out, req.key())) out += " b";
    out += " t\r\n";
    return;
  }
  const bool cas = req.cmd == command::Gets || req.cmd == command::Gats || binary_ || op_ == op::LeaseGet;
  const bool touch = req.cmd == command::Gat || req.cmd == command::Gats || req.cmd == command::Touch;
  const bool value = req.cmd != command::Touch;
  for (std::size_t i = 0; i < key_count(); ++i) {
    out += "mg";
    if (append_meta_key(out, req.keys[key_index(i)])) out += " b";
    out += " f";
    if (value) out += " v";
    if (cas) out += " c";
    if (touch) {
      out += " T";
      append_signed(out, backend_exptime(req, req.exptime));
    }
    if (op_ == op::LeaseGet) {
      out += " N";
      append_signed(out, kLeaseTtl);
    }
    out += "\r\n";
  }
}

reply_shape backend_call::encode_single(std::string& out) {
  const request& req = *req_;
  if (op_ == op::Flush) {
    // Meta has no flush: both backends take the classic command.
    out += "flush_all";
    if (req.has_flush_delay) {
      out += ' ';
      append_signed(out, backend_exptime(req, req.flush_delay));
    }
    out += "\r\n";
    return reply_shape::Line;
  }
  if (proto_ == backend_protocol::Ascii && op_ != op::LeaseSet) {  // lease-set: ms C over either
    encode_ascii_single(out);
    return reply_shape::Line;
  }
  encode_meta_single(out);
  return reply_shape::Meta;
}

// A single-key request, or the current step of a multi-step one (binary
// incr's add/incr/gets rounds, a store's trailing gets for its CAS), as one
// classic ascii command appended to `out`, without `noreply` (every request
// sent gets a reply, so replies stay matched on the pipelined connection).
// Expiry goes through backend_exptime (memcached reads a text TTL as signed
// 32 bits). [the backend connection's worker; pure, appends only]
void backend_call::encode_ascii_single(std::string& out) {
  const request& req = *req_;
  const bool meta = req.proto == protocol_kind::Meta;
  switch (op_) {
    case op::Store: {
      std::string_view verb = "set";
      bool with_cas = req.cmd == command::Cas;
      std::uint32_t flags = req.flags;
      std::int64_t exptime = backend_exptime(req, req.exptime);
      std::uint64_t cas = req.cas;
      if (meta) {
        const meta_flags& m = req.meta;
        flags = m.client_flags;
        exptime = m.has('T') ? m.ttl : 0;
        cas = m.compare_cas;
        // memcached turns set and replace with a CAS into cas; add
        // ignores it; append/prepend with C were refused.
        with_cas = m.has('C') && (m.mode == 0 || m.mode == 'S' || m.mode == 'R');
        verb = m.mode == 'E'   ? "add"
               : m.mode == 'R' ? "replace"
               : m.mode == 'A' ? "append"
               : m.mode == 'P' ? "prepend"
                               : "set";
      } else {
        switch (req.cmd) {
          case command::Add: verb = "add"; break;
          case command::Replace: verb = "replace"; break;
          case command::Append: verb = "append"; break;
          case command::Prepend: verb = "prepend"; break;
          default: break;
        }
        // A binary Set/Add/Replace with a CAS is a cas, as in memcached.
        if (binary_ && cas != 0 &&
            (req.cmd == command::Set || req.cmd == command::Add || req.cmd == command::Replace)) {
          with_cas = true;
        }
      }
      if (with_cas) verb = "cas";
      append_ascii_store(out, verb, req.key(), flags, exptime, req.value, with_cas ? &cas : nullptr);
      return;
    }
    case op::Arith: {
      const bool decr = meta ? (req.meta.mode == 'D' || req.meta.mode == '-') : req.cmd == command::Decr;
      out += decr ? "decr " : "incr ";
      out.append(req.key());
      out += ' ';
      append_decimal(out, req.delta);
      out += "\r\n";
      return;
    }
    case op::Delete:
      out += "delete ";
      out.append(req.key());
      out += "\r\n";
      return;
    case op::Touch:
      out += "touch ";
      out.append(req.key());
      out += ' ';
      append_signed(out, backend_exptime(req, req.exptime));
      out += "\r\n";
      return;
    default: return;
  }
}

// Classic and binary commands (and lease-set) as meta commands.
// Thread and bounds as encode_ascii_single: one meta command appended to
// `out`; a key a text line cannot carry goes base64 with `b`; `q` only with
// the `mn` behind it (a meta client's quiet mode), never the client's
// noreply.
void backend_call::encode_meta_single(std::string& out) {
  const request& req = *req_;
  switch (op_) {
    case op::Store:
    case op::LeaseSet: {
      out += "ms";
      const bool b = append_meta_key(out, req.key());
      out += ' ';
      append_decimal(out, req.value.size());
      if (b) out += " b";
      const bool concat = req.cmd == command::Append || req.cmd == command::Prepend;
      if (!concat) {
        out += " F";
        append_decimal(out, req.flags);
        out += " T";
        append_signed(out, backend_exptime(req, req.exptime));
      }
      // A binary Set/Add/Replace with a CAS is a cas (set + compare),
      // as in memcached; append/prepend compare and keep their mode.
      const bool compare = op_ == op::LeaseSet || req.cmd == command::Cas || (binary_ && req.cas != 0);
      if (!compare || concat) {
        switch (req.cmd) {
          case command::Add: out += " ME"; break;
          case command::Replace: out += " MR"; break;
          case command::Append: out += " MA"; break;
          case command::Prepend: out += " MP"; break;
          default: break;
        }
      }
      if (compare) {
        out += " C";
        append_decimal(out, op_ == op::LeaseSet ? (req.lease_token & ~kLeaseTokenTag) : req.cas);
      }
      if (binary_) out += " c";
      out += "\r\n";
      out.append(req.value);
      out += "\r\n";
      return;
    }
    case op::Arith: {
      out += "ma";
      if (append_meta_key(out, req.key())) out += " b";
      out += " v D";
      append_decimal(out, req.delta);
      if (req.cmd == command::Decr) out += " MD";
      if (binary_) {
        out += " c";
        if (static_cast<std::uint32_t>(req.exptime) != kNoVivify) {
          out += " N";
          append_signed(out, backend_exptime(req, req.exptime));
          out += " J";
          append_decimal(out, req.initial);
        }
        if (req.cas != 0) {
          out += " C";
          append_decimal(out, req.cas);
        }
      }
      out += "\r\n";
      return;
    }
    case op::Delete:
      out += "md";
      if (append_meta_key(out, req.key())) out += " b";
      if (binary_ && req.cas != 0) {
        out += " C";
        append_decimal(out, req.cas);
      }
      out += "\r\n";
      return;
    case op::Touch:
      out += "mg";
      if (append_meta_key(out, req.key())) out += " b";
      out += " T";
      append_signed(out, backend_exptime(req, req.exptime));
      out += "\r\n";
      return;
    default: return;
  }
}

}  // namespace ithaca::protocol
