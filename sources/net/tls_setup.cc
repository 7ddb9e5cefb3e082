#include "tls_setup.h"

#include "openssl_loader.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

namespace ithaca::net {

namespace {

std::string ssl_error_text() {
  const unsigned long e = ERR_get_error();
  char buf[256] = {0};
  if (e != 0) ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return buf[0] != 0 ? buf : "unknown error";
}

// What both sides set: the minimum version, the ciphers, our certificate (if
// any). False with *error.
bool common(SSL_CTX* c, const config::backend_tls& cfg, std::string* error) {
  SSL_CTX_set_min_proto_version(c, tls_min_version(cfg.version()));
  if (!cfg.ciphers.empty() && SSL_CTX_set_cipher_list(c, cfg.ciphers.c_str()) != 1) {
    ERR_clear_error();
    *error = "ciphers '" + cfg.ciphers + "': none of them is known to OpenSSL";
    return false;
  }
  if (!cfg.chain_cert.empty()) {
    const std::string& key = cfg.key.empty() ? cfg.chain_cert : cfg.key;
    if (SSL_CTX_use_certificate_chain_file(c, cfg.chain_cert.c_str()) != 1) {
      *error = "chain_cert " + cfg.chain_cert + ": " + ssl_error_text();
      return false;
    }
    if (SSL_CTX_use_PrivateKey_file(c, key.c_str(), SSL_FILETYPE_PEM) != 1) {
      *error = "key " + key + ": " + ssl_error_text();
      return false;
    }
    if (SSL_CTX_check_private_key(c) != 1) {
      *error = "key " + key + " does not match chain_cert " + cfg.chain_cert + ": " + ssl_error_text();
      return false;
    }
  }
  if (!cfg.ca_cert.empty() && SSL_CTX_load_verify_locations(c, cfg.ca_cert.c_str(), nullptr) != 1) {
    *error = "ca_cert " + cfg.ca_cert + ": " + ssl_error_text();
    return false;
  }
  // One connection is read by one coroutine and written by another: a write
  // retried after WANT_WRITE may come from a buffer that moved (the writer
  // swaps its buffers), and no renegotiation may start behind either's back.
  SSL_CTX_set_mode(c, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
  // A peer that closes without close_notify (memcached closing an idle
  // connection) reads as the end of the stream: the protocols frame every
  // reply, so a truncated one is still noticed.
  // Kernel TLS where the kernel has the `tls` module: tls_conn then writes
  // plaintext to the socket itself (tls_conn.h).
  SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_ENABLE_KTLS);
  return true;
}

// A new context of `method` with what both sides set; nullptr with *error.
ssl_ctx_ptr new_ctx(const SSL_METHOD* method, const config::backend_tls& cfg, std::string* error) {
  ERR_clear_error();
  ssl_ctx_ptr ctx(SSL_CTX_new(method), SSL_CTX_free);
  if (!ctx) {
    if (error) *error = "could not create a TLS context: " + ssl_error_text();
    return nullptr;
  }
  std::string why;
  if (!common(ctx.get(), cfg, &why)) {
    if (error) *error = why;
    return nullptr;
  }
  return ctx;
}

}  // namespace

ssl_ctx_ptr make_client_ctx(const config::backend_tls& cfg, std::string* error) {
  if (!openssl_load(error)) return nullptr;
  ssl_ctx_ptr ctx = new_ctx(TLS_client_method(), cfg, error);
  if (!ctx) return nullptr;
  if (cfg.verify_peer()) {
    if (cfg.ca_cert.empty() && SSL_CTX_set_default_verify_paths(ctx.get()) != 1) {
      if (error) *error = "verify: the system's CA certificates could not be loaded: " + ssl_error_text();
      return nullptr;
    }
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  } else {
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  }
  // Nobody resumes: one long-lived connection per server and worker.
  SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_OFF);
  return ctx;
}

ssl_ctx_ptr make_mutual_server_ctx(const config::backend_tls& cfg, std::string* error) {
  if (cfg.chain_cert.empty() || cfg.ca_cert.empty()) {
    if (error) *error = "chain_cert, key and ca_cert are all needed";
    return nullptr;
  }
  if (!openssl_load(error)) return nullptr;
  ssl_ctx_ptr ctx = new_ctx(TLS_server_method(), cfg, error);
  if (!ctx) return nullptr;
  SSL_CTX_set_client_CA_list(ctx.get(), SSL_load_client_CA_file(cfg.ca_cert.c_str()));
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_OFF);
  SSL_CTX_set_num_tickets(ctx.get(), 0);
  return ctx;
}

int tls_min_version(unsigned level) {
  switch (level) {
    case 0: return TLS1_VERSION;
    case 1: return TLS1_1_VERSION;
    case 3: return TLS1_3_VERSION;
    default: return TLS1_2_VERSION;
  }
}

}  // namespace ithaca::net
