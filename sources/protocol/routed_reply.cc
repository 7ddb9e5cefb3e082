// render_routed_reply: a routed_result in the client's protocol, with the
// bytes memcached 1.6.18 would have sent for the same outcome (the encoders
// of reply.h; the cache executor's choices in sources/cache/exec_*.cc).
#include <array>
#include <charconv>
#include <cstring>
#include <ctime>
#include <string>

#include "binary_format.h"
#include "reply.h"
#include "text_replies.h"
#include "routed_result.h"

namespace ithaca::protocol {
namespace {

// The message for a failed backend call (binary body; text clients get it
// after "SERVER_ERROR "), in mcrouter's words where it has them, since
// mcrouter's clients match on them (mcrouter: McClientRequestContext's
// "Reply timeout", DestinationRoute's "Server unavailable. Reason: " with the
// result that made the server TKO, AsciiSerialized's "connection error",
// "remote error", "local error"); ithaca's detail follows where it helps.
// `down_cause`: with Down, what marked the server down.
std::string_view failure_text(call_failure why, call_failure down_cause = call_failure::ConnectionError) {
  switch (why) {
    case call_failure::Down:
      switch (down_cause) {
        case call_failure::Timeout: return "Server unavailable. Reason: mc_res_timeout";
        case call_failure::BadReply: return "Server unavailable. Reason: mc_res_remote_error";
        default: return "Server unavailable. Reason: mc_res_connect_error";
      }
    case call_failure::Timeout: return "Reply timeout";
    case call_failure::ConnectionError: return "connection error";
    case call_failure::BadReply: return "remote error: the server sent a bad reply";
    case call_failure::QueueFull: return "local error: too many requests queued for the server";
  }
  return "remote error";
}

// A refused (or otherwise failed) connect, as mcrouter answers it: its
// AsyncMcClient fails the waiting requests with the message of folly's
// AsyncSocketException ("connect failed", of type NOT_OPEN, with the errno),
// and its ascii reply carries a reply's message after "SERVER_ERROR ".
std::string connect_failure_text(int err) {
  return "AsyncSocketException: connect failed, type = Socket not open, errno = " + std::to_string(err) + " (" +
         std::strerror(err) + ")";
}

// A Failed result's text.
std::string failed_text(const routed_result& r) {
  if (r.failure == call_failure::ConnectionError && r.connect_errno != 0) return connect_failure_text(r.connect_errno);
  return std::string(failure_text(r.failure, r.down_cause));
}

void encode_failure_line(out_buffer& out, call_failure why, call_failure down_cause = call_failure::ConnectionError) {
  out.append("SERVER_ERROR ");
  encode_ascii_line(out, failure_text(why, down_cause));
}

void encode_failure_line(out_buffer& out, const routed_result& r) {
  out.append("SERVER_ERROR ");
  encode_ascii_line(out, failed_text(r));
}

bool is_text_get(command cmd) {
  return cmd == command::Get || cmd == command::Gets || cmd == command::Gat || cmd == command::Gats;
}

// Outcomes that end in one line whatever the command, for text clients.
// False if `outcome` is a command-specific one.
bool encode_text_common(out_buffer& out, const routed_result& r) {
  switch (r.outcome) {
    case routed_outcome::ErrorLine:
    case routed_outcome::Refused: encode_ascii_line(out, r.text); return true;
    case routed_outcome::Failed: encode_failure_line(out, r); return true;
    case routed_outcome::Pending: encode_failure_line(out, call_failure::BadReply); return true;
    case routed_outcome::NonNumeric: encode_ascii_line(out, kReplyNonNumeric); return true;
    case routed_outcome::Raw: out.append(r.raw); return true;
    default: return false;
  }
}

// ---- classic ascii ----------------------------------------------------------

void render_ascii(const request& req, const routed_result& r, out_buffer& out, bool ends_reply) {
  if (req.cmd == command::McMetaget) {
    if (r.outcome != routed_outcome::Hits && encode_text_common(out, r)) return;
    if (r.key_count() == 1 && r.hit(0).found) {
      const auto ttl = static_cast<std::int64_t>(r.number);  // remaining seconds, -1: never
      encode_metaget(out, req.key(), ttl < 0 ? 0 : static_cast<std::int64_t>(std::time(nullptr)) + ttl);
    }
    encode_ascii_status(out, ascii_status::End);
    return;
  }
  if (is_text_get(req.cmd) || req.cmd == command::LeaseGet) {
    if (r.outcome != routed_outcome::Hits && r.outcome != routed_outcome::LeaseToken && encode_text_common(out, r)) {
      return;
    }
    if (r.outcome == routed_outcome::LeaseToken) {
      const auto& h = r.hit(0);
      encode_lease_value(out, req.key(), r.number, h.found ? h.flags : 0, h.found ? r.data(h) : "");
      return;
    }
    const bool with_cas = req.cmd == command::Gets || req.cmd == command::Gats;
    for (std::size_t i = 0; i < r.key_count(); ++i) {
      const auto& h = r.hit(i);
      if (!h.found) continue;
      // memcached's own VALUE piece, when it is what we would write.
      if (h.header != 0 && h.raw_has_cas == with_cas) {
        out.append(r.raw_piece(h));
        continue;
      }
      encode_ascii_value(out, req.keys[i], h.flags, r.data(h), with_cas ? &h.cas : nullptr);
    }
    if (!ends_reply) return;
    encode_ascii_status(out, ascii_status::End);
    // memcached transmits after every get: a later get refused for a
    // long key culls only what came after this (exec_errors.cc).
    out.mark_sent();
    return;
  }
  if (req.noreply) return;  // never forwarded: the router hides the reply here
  if (encode_text_common(out, r)) return;
  switch (r.outcome) {
    case routed_outcome::Stored: return encode_ascii_status(out, ascii_status::Stored);
    case routed_outcome::NotStored:
    case routed_outcome::Exists:
    case routed_outcome::NotFound:
      if (req.cmd == command::LeaseSet) return encode_ascii_status(out, ascii_status::NotStored);
      return encode_ascii_status(out, r.outcome == routed_outcome::NotStored ? ascii_status::NotStored
                                      : r.outcome == routed_outcome::Exists  ? ascii_status::Exists
                                                                             : ascii_status::NotFound);
    case routed_outcome::Deleted: return encode_ascii_status(out, ascii_status::Deleted);
    case routed_outcome::Touched: return encode_ascii_status(out, ascii_status::Touched);
    case routed_outcome::Ok: return encode_ascii_status(out, ascii_status::Ok);
    case routed_outcome::Number: return encode_ascii_number(out, r.number);
    default: return encode_failure_line(out, call_failure::BadReply);
  }
}

// ---- meta (served by an ascii backend; a meta backend's reply is Raw) --------

void render_meta(const request& req, const routed_result& r, out_buffer& out) {
  const bool q = req.meta.has('q');
  const bool kb = req.meta_key_binary;
  if (r.outcome != routed_outcome::Hits && encode_text_common(out, r)) return;
  meta_item item;
  switch (r.outcome) {
    case routed_outcome::Hits: {
      const auto& h = r.hit(0);
      if (!h.found) {
        if (!q) encode_meta(out, meta_code::EN, req, nullptr, {}, kb);
        return;
      }
      item.cas = h.cas;
      item.flags = h.flags;
      item.size = h.length;
      if (req.meta.has('v')) return encode_meta(out, meta_code::VA, req, &item, r.data(h), kb);
      return encode_meta(out, meta_code::HD, req, &item, {}, kb);
    }
    case routed_outcome::Stored:
    case routed_outcome::Deleted:
      if (!q) encode_meta(out, meta_code::HD, req, nullptr, {}, kb);
      return;
    case routed_outcome::NotStored: return encode_meta(out, meta_code::NS, req, nullptr, {}, kb);
    case routed_outcome::Exists: return encode_meta(out, meta_code::EX, req, nullptr, {}, kb);
    case routed_outcome::NotFound: return encode_meta(out, meta_code::NF, req, nullptr, {}, kb);
    case routed_outcome::Number: {
      if (q) return;
      if (!req.meta.has('v')) return encode_meta(out, meta_code::HD, req, &item, {}, kb);
      std::array<char, 24> digits;
      const auto res = std::to_chars(digits.data(), digits.data() + digits.size(), r.number);
      const std::string_view value(digits.data(), static_cast<std::size_t>(res.ptr - digits.data()));
      item.size = value.size();
      return encode_meta(out, meta_code::VA, req, &item, value, kb);
    }
    default: return encode_failure_line(out, call_failure::BadReply);
  }
}

// ---- binary -----------------------------------------------------------------

void binary_ok(out_buffer& out, const request& req, std::uint64_t cas) {
  encode_binary(out, req.opcode, req.opaque, binary_status::NoError, cas, {}, {}, {});
}

void binary_error(out_buffer& out, const request& req, binary_status st, std::string_view body) {
  encode_binary(out, req.opcode, req.opaque, st, 0, {}, {}, body);
}

// A backend's error line, in binary terms.
void binary_error_line(out_buffer& out, const request& req, std::string_view line) {
  if (line.starts_with("SERVER_ERROR object too large")) {
    return encode_binary_error(out, req, binary_status::ValueTooLarge);
  }
  if (line.starts_with("SERVER_ERROR out of memory")) {
    return encode_binary_error(out, req, binary_status::OutOfMemory);
  }
  if (line == "ERROR") return encode_binary_error(out, req, binary_status::UnknownCommand);
  if (line.starts_with("CLIENT_ERROR")) return encode_binary_error(out, req, binary_status::InvalidArguments);
  binary_error(out, req, binary_status::InternalError, line);
}

binary_status failure_status(call_failure why) {
  return why == call_failure::BadReply ? binary_status::InternalError : binary_status::TemporaryFailure;
}

void render_binary(const request& req, const routed_result& r, out_buffer& out) {
  switch (r.outcome) {
    case routed_outcome::ErrorLine: return binary_error_line(out, req, r.text);
    case routed_outcome::Refused: return binary_error(out, req, r.bstatus, r.text);
    case routed_outcome::Failed:
      return binary_error(out, req, failure_status(r.failure), failed_text(r));
    case routed_outcome::Pending:
      return binary_error(out, req, binary_status::InternalError, failure_text(call_failure::BadReply));
    case routed_outcome::NonNumeric: return encode_binary_error(out, req, binary_status::DeltaBadValue);
    case routed_outcome::Hits: {
      const auto& h = r.hit(0);
      if (!h.found) {
        if (!req.noreply) encode_binary_error(out, req, binary_status::KeyNotFound);
        return;
      }
      if (req.cmd == command::Touch) {
        std::array<char, 4> extras;
        store_be32(extras.data(), h.flags);
        encode_binary(out, req.opcode, req.opaque, binary_status::NoError, h.cas,
                      std::string_view(extras.data(), extras.size()), {}, {});
        return;
      }
      return encode_binary_get(out, req, h.flags, h.cas, r.data(h));
    }
    case routed_outcome::Stored:
    case routed_outcome::Deleted:
    case routed_outcome::Ok:
      if (!req.noreply) binary_ok(out, req, r.outcome == routed_outcome::Stored ? r.cas : 0);
      return;
    case routed_outcome::Number:
      if (!req.noreply) encode_binary_number(out, req, r.number, r.cas);
      return;
    case routed_outcome::NotStored:
      // memcached words a refused add as "exists" and a refused replace
      // as "not found"; only append/prepend say "not stored".
      return encode_binary_error(out, req,
                                 req.cmd == command::Add       ? binary_status::KeyExists
                                 : req.cmd == command::Replace ? binary_status::KeyNotFound
                                                               : binary_status::ItemNotStored);
    case routed_outcome::Exists: return encode_binary_error(out, req, binary_status::KeyExists);
    case routed_outcome::NotFound: return encode_binary_error(out, req, binary_status::KeyNotFound);
    default: return binary_error(out, req, binary_status::InternalError, failure_text(call_failure::BadReply));
  }
}

}  // namespace

void render_routed_reply(const request& req, const routed_result& result, out_buffer& out, bool ends_reply) {
  switch (req.proto) {
    case protocol_kind::Ascii: return render_ascii(req, result, out, ends_reply);
    case protocol_kind::Meta: return render_meta(req, result, out);
    case protocol_kind::Binary: return render_binary(req, result, out);
  }
}

}  // namespace ithaca::protocol
