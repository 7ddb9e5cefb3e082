// OpenSSL contexts for the TLS ithaca speaks between its own peers and to
// backend servers, from config::backend_tls: a client context (a pool's
// servers, a replication slave's master) and the replication master's server
// context, which requires a client certificate signed by the configured CA.
// The client listeners' context (memcached's -Z) is server/tls_context.h.
//
// Reads the certificate files: call it where blocking on the file system is
// allowed (the config's load, the pooler at start-up and reload). [any thread]
#pragma once

#include <memory>
#include <string>

#include "backend_tls.h"

struct ssl_ctx_st;
using SSL_CTX = ssl_ctx_st;

namespace ithaca::net {

using ssl_ctx_ptr = std::shared_ptr<SSL_CTX>;

// OpenSSL's protocol version for memcached's ssl_min_version level (0 TLS 1.0,
// 1 TLS 1.1, 2 TLS 1.2, 3 TLS 1.3; anything else TLS 1.2, the default). The
// client listeners' context (server/tls_context.cc) takes it too.
int tls_min_version(unsigned level);

// nullptr and *error ("ca_cert FILE: OpenSSL's reason") on a bad file or
// value.
ssl_ctx_ptr make_client_ctx(const config::backend_tls& cfg, std::string* error);
// The mutual-TLS server side: chain_cert + key are ours, ca_cert is what a
// peer's certificate must chain to (required: a peer without one is refused
// in the handshake).
ssl_ctx_ptr make_mutual_server_ctx(const config::backend_tls& cfg, std::string* error);

}  // namespace ithaca::net
