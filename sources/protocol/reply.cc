#include "reply.h"

#include <array>
#include <charconv>
#include <cstring>

#include "base64.h"
#include "binary_format.h"

namespace ithaca::protocol {
namespace {

// Writes v's digits at p (room for 20 is the caller's: any 64-bit value, with
// its sign) and returns their end.
template <typename Int>
char* put_number(char* p, Int v) {
  return std::to_chars(p, p + 20, v).ptr;
}
char* put_u64(char* p, std::uint64_t v) { return put_number(p, v); }

// Numbers are formatted in place at the reply's end (out_buffer::tail_room).
template <typename Int>
void append_number(out_buffer& out, Int v) {
  char* p = out.tail_room(20);
  out.commit(static_cast<std::size_t>(put_number(p, v) - p));
}
void append_u64(out_buffer& out, std::uint64_t v) { append_number(out, v); }
void append_i64(out_buffer& out, std::int64_t v) { append_number(out, v); }

}  // namespace

void encode_ascii_status(out_buffer& out, ascii_status status) {
  switch (status) {
    case ascii_status::Stored: out.append("STORED\r\n"); return;
    case ascii_status::NotStored: out.append("NOT_STORED\r\n"); return;
    case ascii_status::Exists: out.append("EXISTS\r\n"); return;
    case ascii_status::NotFound: out.append("NOT_FOUND\r\n"); return;
    case ascii_status::Deleted: out.append("DELETED\r\n"); return;
    case ascii_status::Touched: out.append("TOUCHED\r\n"); return;
    case ascii_status::Ok: out.append("OK\r\n"); return;
    case ascii_status::End: out.append("END\r\n"); return;
    case ascii_status::Error: out.append("ERROR\r\n"); return;
  }
}

void encode_ascii_line(out_buffer& out, std::string_view line) {
  out.append(line);
  out.append("\r\n");
}

void encode_ascii_value(out_buffer& out, std::string_view key, std::uint32_t flags, std::string_view data,
                        const std::uint64_t* cas, value_owner owner) {
  // Runs once per hit in both roles: the header (and a value small enough
  // to be copied anyway) is formatted in place at the reply's end, in one
  // piece, not as ten small appends.
  constexpr std::size_t kRoom = 6 + 3 * 21 + 2;  // "VALUE ", numbers, CRLF
  const bool copy = data.size() <= out_buffer::kCopyThreshold;
  char* const base = out.tail_room(key.size() + kRoom + (copy ? data.size() + 2 : 0));
  char* p = base;
  std::memcpy(p, "VALUE ", 6);
  p += 6;
  std::memcpy(p, key.data(), key.size());
  p += key.size();
  *p++ = ' ';
  p = put_u64(p, flags);
  *p++ = ' ';
  p = put_u64(p, data.size());
  if (cas != nullptr) {
    *p++ = ' ';
    p = put_u64(p, *cas);
  }
  *p++ = '\r';
  *p++ = '\n';
  if (copy) {
    std::memcpy(p, data.data(), data.size());
    p += data.size();
    *p++ = '\r';
    *p++ = '\n';
    out.commit(static_cast<std::size_t>(p - base));
    return;
  }
  out.commit(static_cast<std::size_t>(p - base));
  out.append_value(data, std::move(owner));
  out.append("\r\n");
}

void encode_ascii_number(out_buffer& out, std::uint64_t n) {
  append_u64(out, n);
  out.append("\r\n");
}

void encode_ascii_stat(out_buffer& out, std::string_view name, std::string_view value) {
  out.append("STAT ");
  out.append(name);
  out.append(' ');
  out.append(value);
  out.append("\r\n");
}

void encode_ascii_version(out_buffer& out, std::string_view version) {
  out.append("VERSION ");
  out.append(version);
  out.append("\r\n");
}

void encode_metaget(out_buffer& out, std::string_view key, std::int64_t exptime) {
  out.append("META ");
  out.append(key);
  out.append(" age: unknown; exptime: ");
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, exptime).ptr;
  out.append(std::string_view(digits, static_cast<std::size_t>(end - digits)));
  out.append("; from: unknown; is_transient: 0\r\n");
}

void encode_lease_value(out_buffer& out, std::string_view key, std::uint64_t token, std::uint32_t flags,
                        std::string_view data) {
  out.append("LVALUE ");
  out.append(key);
  out.append(' ');
  append_u64(out, token);
  out.append(' ');
  append_u64(out, flags);
  out.append(' ');
  append_u64(out, data.size());
  out.append("\r\n");
  out.append(data);
  out.append("\r\nEND\r\n");
}

// One meta reply (HD VA EN NS EX NF MN) with the return flags the request
// asked for, in memcached 1.6.18's order and spelling (k, O, b echo the
// request; c f h l s t from `item`; q hides what memcached hides). A value
// over kCopyThreshold (2 KiB) with an `owner` is referenced, not copied (out_buffer).
// [whoever renders the reply: the cache executor or the router's renderer,
// on the client's worker; pure, appends only]
void encode_meta(out_buffer& out, meta_code code, const request& req, const meta_item* item, std::string_view data,
                 bool key_binary, value_owner owner) {
  switch (code) {
    case meta_code::HD: out.append("HD"); break;
    case meta_code::VA:
      out.append("VA ");
      append_u64(out, data.size());
      break;
    case meta_code::EN: out.append("EN"); break;
    case meta_code::NS: out.append("NS"); break;
    case meta_code::EX: out.append("EX"); break;
    case meta_code::NF: out.append("NF"); break;
    case meta_code::MN: out.append("MN\r\n"); return;
  }
  const bool is_get = req.cmd == command::MetaGet;
  const bool is_set = req.cmd == command::MetaSet;
  const bool is_arith = req.cmd == command::MetaArithmetic;
  const meta_flags& m = req.meta;
  for (std::size_t i = 0; i < m.order_size; ++i) {
    const char f = m.order[i];
    switch (f) {
      case 'O':
        out.append(" O");
        out.append(m.opaque);
        break;
      case 'k':
        out.append(" k");
        if (key_binary) {
          std::array<char, base64_encoded_size(kMaxKeyLength)> buf;
          const std::size_t n = base64_encode(req.key(), buf);
          out.append(std::string_view(buf.data(), n));
          out.append(" b");
        } else {
          out.append(req.key());
        }
        break;
      case 'c':
        if (item != nullptr && (is_get || is_set || is_arith)) {
          out.append(" c");
          append_u64(out, item->cas);
        }
        break;
      case 't':
        if (item != nullptr && (is_get || is_arith)) {
          out.append(" t");
          append_i64(out, item->ttl);
        }
        break;
      case 'f':
        if (item != nullptr && is_get) {
          out.append(" f");
          append_u64(out, item->flags);
        }
        break;
      case 's':  // ms s: 1.6.45
        if (item != nullptr && (is_get || is_set)) {
          out.append(" s");
          append_u64(out, item->size);
        }
        break;
      case 'h':
        if (item != nullptr && is_get) out.append(item->fetched ? " h1" : " h0");
        break;
      case 'l':
        if (item != nullptr && is_get) {
          out.append(" l");
          append_u64(out, item->last_access);
        }
        break;
      default: break;
    }
  }
  // memcached 1.6.18 prints Z (a token was sent before), then X (stale),
  // then W (this client won): "VA 2 X W", "VA 2 Z X" (captured).
  if (item != nullptr) {
    if (item->won_already) out.append(" Z");
    if (item->stale) out.append(" X");
    if (item->win) out.append(" W");
  }
  out.append("\r\n");
  if (code == meta_code::VA) {
    out.append_value(data, std::move(owner));
    out.append("\r\n");
  }
}

void encode_meta_debug(out_buffer& out, std::string_view key, std::string_view text) {
  out.append("ME ");
  out.append(key);
  out.append(' ');
  out.append(text);
  out.append("\r\n");
}

void encode_binary(out_buffer& out, std::uint8_t opcode_byte, std::uint32_t opaque, binary_status status,
                   std::uint64_t cas, std::string_view extras, std::string_view key, std::string_view value,
                   value_owner owner) {
  binary_header h;
  h.magic = kBinaryResponseMagic;
  h.opcode = opcode_byte;
  h.key_length = static_cast<std::uint16_t>(key.size());
  h.extras_length = static_cast<std::uint8_t>(extras.size());
  h.vbucket_or_status = static_cast<std::uint16_t>(status);
  h.body_length = static_cast<std::uint32_t>(extras.size() + key.size() + value.size());
  h.opaque = opaque;
  h.cas = cas;
  std::array<char, kBinaryHeaderSize> buf;
  encode_header(h, buf.data());
  out.append(std::string_view(buf.data(), buf.size()));
  out.append(extras);
  out.append(key);
  out.append_value(value, std::move(owner));
}

void encode_binary_get(out_buffer& out, const request& req, std::uint32_t flags, std::uint64_t cas,
                       std::string_view value, value_owner owner) {
  std::array<char, 4> extras;
  store_be32(extras.data(), flags);
  encode_binary(out, req.opcode, req.opaque, binary_status::NoError, cas,
                std::string_view(extras.data(), extras.size()), req.binary_with_key ? req.key() : std::string_view{},
                value, std::move(owner));
}

std::string_view binary_status_text(binary_status status) {
  switch (status) {
    case binary_status::NoError: return {};
    case binary_status::KeyNotFound: return "Not found";
    case binary_status::KeyExists: return "Data exists for key.";
    case binary_status::ValueTooLarge: return "Too large.";
    case binary_status::InvalidArguments: return "Invalid arguments";
    case binary_status::ItemNotStored: return "Not stored.";
    case binary_status::DeltaBadValue: return "Non-numeric server-side value for incr or decr";
    case binary_status::AuthError: return "Auth failure.";
    case binary_status::AuthContinue: return {};
    case binary_status::UnknownCommand: return "Unknown command";
    case binary_status::OutOfMemory: return "Out of memory";
    case binary_status::NotSupported: return "Not supported";
    case binary_status::InternalError: return "Internal error";
    case binary_status::TemporaryFailure: return "Temporary failure";
  }
  return "UNHANDLED ERROR";
}

void encode_binary_error(out_buffer& out, const request& req, binary_status status) {
  if (status == binary_status::KeyNotFound && req.binary_with_key) {
    encode_binary(out, req.opcode, req.opaque, status, 0, {}, req.key(), {});
    return;
  }
  encode_binary(out, req.opcode, req.opaque, status, 0, {}, {}, binary_status_text(status));
}

void encode_binary_number(out_buffer& out, const request& req, std::uint64_t value, std::uint64_t cas) {
  std::array<char, 8> body;
  store_be64(body.data(), value);
  encode_binary(out, req.opcode, req.opaque, binary_status::NoError, cas, {}, {},
                std::string_view(body.data(), body.size()));
}

void encode_binary_stat(out_buffer& out, const request& req, std::string_view name, std::string_view value) {
  encode_binary(out, req.opcode, req.opaque, binary_status::NoError, 0, {}, name, value);
}

void encode_parse_error(out_buffer& out, const parse_result& result, const request& req) {
  if (result.status != parse_status::Error || result.silent) return;
  if (req.proto == protocol_kind::Binary) {
    if (result.bstatus == binary_status::NoError) return;  // BadMagic: close silently
    encode_binary_error(out, req, result.bstatus);
    return;
  }
  if (result.reply.empty()) return;  // LineTooLong, CrossProtocol
  encode_ascii_line(out, result.reply);
}

}  // namespace ithaca::protocol
