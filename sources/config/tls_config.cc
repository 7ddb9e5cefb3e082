#include "tls_config.h"

#include "fail.h"
#include "units.h"

namespace ithaca::config {

const char* min_version_text(unsigned v) {
  switch (v) {
    case 0: return "tlsv1.0";
    case 1: return "tlsv1.1";
    case 2: return "tlsv1.2";
    case 3: return "tlsv1.3";
    default: return "unknown";
  }
}

bool parse_min_version(std::string_view text, unsigned& out) {
  uint64_t n = 0;
  if (parse_unsigned(text, n)) {
    if (n > kMinVersionMax) return false;
    out = static_cast<unsigned>(n);
    return true;
  }
  for (unsigned v = 0; v <= kMinVersionMax; v++) {
    if (text == min_version_text(v)) {
      out = v;
      return true;
    }
  }
  return false;
}

// memcached's messages for -o ssl_* (memcached.c, its SSL_* sub-options).
bool apply_tls_suboption(std::string_view name, std::string_view value, bool has_value, tls_config& out, bool& known,
                         std::string* error) {
  known = true;
  const std::string n(name);
  auto missing = [&] { return fail(error, "Missing " + n + " argument"); };
  if (name == "ssl_session_cache") {
    out.session_cache = true;
    return true;
  }
  if (name == "ssl_kernel_tls") {
    out.kernel_tls = true;
    return true;
  }
  if (name != "ssl_chain_cert" && name != "ssl_key" && name != "ssl_ca_cert" && name != "ssl_ciphers" &&
      name != "ssl_verify_mode" && name != "ssl_min_version" && name != "ssl_keyformat" && name != "ssl_wbuf_size") {
    known = false;
    return false;
  }
  if (!has_value) return missing();
  uint64_t number = 0;
  if (name == "ssl_chain_cert") {
    out.chain_cert = std::string(value);
  } else if (name == "ssl_key") {
    out.key = std::string(value);
  } else if (name == "ssl_ca_cert") {
    out.ca_cert = std::string(value);
  } else if (name == "ssl_ciphers") {
    out.ciphers = std::string(value);
  } else if (name == "ssl_verify_mode") {
    if (!parse_unsigned(value, number)) return fail(error, "could not parse argument to ssl_verify_mode");
    if (number > kVerifyModeMax) return fail(error, "Invalid ssl_verify_mode. Use help to see valid options.");
    out.verify_mode = static_cast<unsigned>(number);
  } else if (name == "ssl_min_version") {
    // memcached takes 0..3; the names (tlsv1.2) are ithaca's addition.
    unsigned v = 0;
    if (!parse_min_version(value, v)) {
      return fail(error, parse_unsigned(value, number) ? "Invalid ssl_min_version. Use help to see valid options."
                                                       : "could not parse argument to ssl_min_version");
    }
    out.min_version = v;
  } else if (name == "ssl_keyformat") {
    if (!parse_unsigned(value, number)) return fail(error, "could not parse argument to ssl_keyformat");
    if (number != kKeyformatPem && number != kKeyformatAsn1) {
      return fail(error, "ssl_keyformat: expected 1 (PEM) or 2 (DER), got '" + std::string(value) + "'");
    }
    out.keyformat = static_cast<int>(number);
  } else {  // ssl_wbuf_size, in kilobytes as memcached takes it
    if (!parse_unsigned(value, number) || number == 0 || number > 1024) {
      return fail(error, "could not parse argument to ssl_wbuf_size");
    }
    out.wbuf_size = number * 1024;
  }
  return true;
}

}  // namespace ithaca::config
