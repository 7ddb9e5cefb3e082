// TLS for clients: memcached's -Z and `-o ssl_*` options, and the YAML's
// `tls:` section, in one model (the listeners that stay plaintext are the
// listen.tcp entries marked notls, tcp_address::notls). The server builds
// its OpenSSL context from this (server/tls_context.h); this library knows
// nothing of OpenSSL, so the numbers below are memcached's (its -o values).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ithaca::config {

// What one TLS listener asks of its clients' certificates, memcached 1.6's
// listener prefixes: "btls:" never asks for one (whatever ssl_verify_mode
// says), "mtls:" requires one that chains to ssl_ca_cert; Default follows
// ssl_verify_mode.
enum class peer_check : uint8_t { Default, None, Required };

// memcached's ssl_verify_mode: 0 none, 1 request, 2 require, 3 once.
inline constexpr unsigned kVerifyModeMax = 3;
// memcached's ssl_min_version: 0 tlsv1.0, 1 tlsv1.1, 2 tlsv1.2, 3 tlsv1.3.
inline constexpr unsigned kMinVersionMax = 3;
// memcached's ssl_keyformat: OpenSSL's SSL_FILETYPE_PEM (1) / _ASN1 (2).
inline constexpr int kKeyformatPem = 1;
inline constexpr int kKeyformatAsn1 = 2;

struct tls_config {
  bool enabled = false;            // -Z, --enable-ssl; tls.enabled
  std::string chain_cert;          // ssl_chain_cert: the certificate chain, PEM
  std::string key;                 // ssl_key: the private key ("" = in chain_cert)
  std::string ca_cert;             // ssl_ca_cert: CAs a client certificate must chain to
  unsigned verify_mode = 0;        // ssl_verify_mode (0..3, memcached's numbers)
  unsigned min_version = 2;        // ssl_min_version (0..3; memcached's default tlsv1.2)
  std::string ciphers;             // ssl_ciphers: OpenSSL's cipher list (TLS 1.2); "" = OpenSSL's
  int keyformat = kKeyformatPem;   // ssl_keyformat
  uint64_t wbuf_size = 16 * 1024;  // ssl_wbuf_size: bytes a write gathers per SSL_write
  bool session_cache = false;      // ssl_session_cache: server-side session resumption
  bool kernel_tls = true;          // ssl_kernel_tls: kTLS where the kernel has it (ithaca: on by default)
  bool operator==(const tls_config&) const = default;
};

// "tlsv1.2" for 2 (memcached's ssl_proto_text).
const char* min_version_text(unsigned v);
// A min version as memcached takes it (0..3) or by name (tlsv1.2, tlsv1.3).
bool parse_min_version(std::string_view text, unsigned& out);

// One `-o` sub-option (name, value; `has_value` false for "ssl_session_cache"
// alone). Returns false with memcached's words in *error. `known` is set
// false for a sub-option that is not a TLS one (the caller refuses those).
bool apply_tls_suboption(std::string_view name, std::string_view value, bool has_value, tls_config& out, bool& known,
                         std::string* error);

}  // namespace ithaca::config
