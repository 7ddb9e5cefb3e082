// TLS that ithaca speaks as a client: to a pool's backend servers (a pool's
// `tls:`, mcrouter's `use_ssl`) and, with a certificate of its own, between
// replication nodes (`replication.tls`). Plain values; the net library builds
// OpenSSL contexts from them (net/tls_setup.h). This library knows nothing
// of OpenSSL.
//
// Where a pool's settings come from: `router.tls:` holds the defaults (and
// what mcrouter's --pem-cert-path / --pem-key-path / --pem-ca-path set); a
// pool's `tls: true` takes them as they are, a pool's `tls: {...}` map sets
// its own keys over them. resolve_pool_tls() does the merge once every source
// (file, flags) is read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ithaca::config {

enum class tls_verify : uint8_t {
  Default,  // not said: verify when a CA is given (ca_cert), else not
  On,       // the peer's certificate must chain to ca_cert (or the system's CAs)
  Off,      // any certificate (encryption without authentication)
};

struct backend_tls {
  bool enabled = false;
  std::string ca_cert;  // CAs the server's certificate must chain to (PEM)
  tls_verify verify = tls_verify::Default;
  std::string chain_cert;    // our certificate (chain), PEM: sent when the server asks
  std::string key;           // its key ("" = in chain_cert)
  std::string server_name;   // SNI, and the name the certificate must carry ("" = no name check)
  unsigned min_version = 0;  // memcached's numbers (tls_config.h) + 1; 0 = not said (tlsv1.2)
  std::string ciphers;       // OpenSSL's cipher list for TLS 1.2 ("" = OpenSSL's)
  bool operator==(const backend_tls&) const = default;

  // The effective values.
  bool verify_peer() const { return verify == tls_verify::On || (verify == tls_verify::Default && !ca_cert.empty()); }
  unsigned version() const { return min_version == 0 ? 2 : min_version - 1; }
};

// `over`'s keys where it says one, `base`'s elsewhere; enabled from `over`.
backend_tls merge_tls(const backend_tls& base, const backend_tls& over);

// "off", or "on (verify, client certificate)", for logs and stats.
std::string describe(const backend_tls& t);

// The files a TLS setting names exist and can be read: false with
// "WHAT: ca_cert FILE: No such file or directory". Reads no certificate (the
// net library does, at start and reload). [any thread; touches the file system]
bool check_tls_files(const backend_tls& t, std::string_view what, std::string* error);

}  // namespace ithaca::config
