#include "backend_encode.h"

#include <array>
#include <charconv>

#include "base64.h"

namespace ithaca::protocol {

void append_decimal(std::string& out, std::uint64_t v) {
  std::array<char, 24> buf;
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  out.append(buf.data(), static_cast<std::size_t>(r.ptr - buf.data()));
}

void append_signed(std::string& out, std::int64_t v) {
  std::array<char, 24> buf;
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  out.append(buf.data(), static_cast<std::size_t>(r.ptr - buf.data()));
}

bool text_safe_key(std::string_view key) {
  for (const char c : key) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return false;
  }
  return !key.empty();
}

bool append_meta_key(std::string& out, std::string_view key, bool force_base64) {
  out += ' ';
  if (!force_base64 && text_safe_key(key)) {
    out.append(key);
    return false;
  }
  std::array<char, base64_encoded_size(kMaxKeyLength)> buf;
  const std::size_t n = base64_encode(key.substr(0, kMaxKeyLength), buf);
  out.append(buf.data(), n);
  return true;
}

void append_ascii_store(std::string& out, std::string_view verb, std::string_view key, std::uint32_t flags,
                        std::int64_t exptime, std::string_view data, const std::uint64_t* cas) {
  out.append(verb);
  out += ' ';
  out.append(key);
  out += ' ';
  append_decimal(out, flags);
  out += ' ';
  append_signed(out, exptime);
  out += ' ';
  append_decimal(out, data.size());
  if (cas != nullptr) {
    out += ' ';
    append_decimal(out, *cas);
  }
  out += "\r\n";
  out.append(data);
  out += "\r\n";
}

void append_meta_passthrough(std::string& out, const request& req) {
  const meta_flags& m = req.meta;
  switch (req.cmd) {
    case command::MetaGet: out += "mg"; break;
    case command::MetaSet: out += "ms"; break;
    case command::MetaDelete: out += "md"; break;
    case command::MetaArithmetic: out += "ma"; break;
    default: out += "me"; break;
  }
  // The client's 'b' is among its flags below: only the key is re-encoded.
  append_meta_key(out, req.key(), req.meta_key_binary);
  if (req.cmd == command::MetaSet) {
    out += ' ';
    append_decimal(out, req.value.size());
  }
  for (std::size_t i = 0; i < m.order_size; ++i) {
    const char c = m.order[i];
    out += ' ';
    out += c;
    switch (c) {
      case 'N': append_signed(out, m.vivify_ttl); break;
      case 'T': append_signed(out, m.ttl); break;
      case 'R': append_signed(out, m.recache_ttl); break;
      case 'F': append_decimal(out, m.client_flags); break;
      case 'C': append_decimal(out, m.compare_cas); break;
      case 'E': append_decimal(out, m.explicit_cas); break;
      case 'D': append_decimal(out, m.delta); break;
      case 'J': append_decimal(out, m.initial); break;
      case 'M': out += m.mode; break;
      case 'O': out.append(m.opaque); break;
      default: break;  // flags without a token
    }
  }
  out += "\r\n";
  if (req.cmd == command::MetaSet) {
    out.append(req.value);
    out += "\r\n";
  }
}

}  // namespace ithaca::protocol
