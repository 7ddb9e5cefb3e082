#include "tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <ctime>

#include "machinarium.h"
#include "openssl_loader.h"
#include "tls_setup.h"

namespace ithaca::server {

namespace {

// Resumed sessions are keyed to this context name (memcached uses its own).
constexpr char kSessionContext[] = "ithaca";

// OpenSSL's top error, as memcached prints it; drains the rest.
std::string ssl_error_text() {
  const unsigned long e = ERR_get_error();
  char buf[256] = {0};
  if (e != 0) ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

int verify_flags(unsigned mode) {
  switch (mode) {
    case 1: return SSL_VERIFY_PEER;
    case 2: return SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    case 3: return SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT | SSL_VERIFY_CLIENT_ONCE;
    default: return SSL_VERIFY_NONE;
  }
}

// Counts sessions the server cache keeps (memcached's ssl_new_sessions).
// Runs on the worker doing the handshake.
int on_new_session(SSL* ssl, SSL_SESSION*) {
  auto* counters = static_cast<tls_counters*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
  if (counters) counters->new_sessions.fetch_add(1, std::memory_order_relaxed);
  return 0;  // OpenSSL keeps its reference
}

}  // namespace

int64_t tls_context::monotonic_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec;
}

std::shared_ptr<tls_context> tls_context::create(const config::tls_config& cfg, std::string* error) {
  std::shared_ptr<tls_context> t(new tls_context(cfg));
  if (!t->refresh(error)) return nullptr;
  return t;
}

tls_context::~tls_context() = default;

std::shared_ptr<SSL_CTX> tls_context::current() const {
  std::lock_guard lock(mutex_);
  return ctx_;
}

bool tls_context::refresh(std::string* error) {
  std::lock_guard serial(refresh_mutex_);
  std::shared_ptr<SSL_CTX> fresh = build(error);
  if (!fresh) return false;
  {
    std::lock_guard lock(mutex_);
    ctx_.swap(fresh);
  }
  loaded_at_s_.store(monotonic_s(), std::memory_order_relaxed);
  return true;  // the old context (in `fresh`) is freed once its last connection ends
}

bool tls_context::refresh_from_coroutine(std::string* error, int64_t timeout_ms) {
  struct result {
    bool ok = false;
    std::string error;
  };
  auto r = std::make_shared<result>();
  const mm::wait_status w =
      mm::blocking_call([self = shared_from_this(), r] { r->ok = self->refresh(&r->error); }, timeout_ms);
  if (w != mm::wait_status::Ok) {
    if (error) *error = "the certificate files were not read within " + std::to_string(timeout_ms) + " ms";
    return false;
  }
  if (!r->ok && error) *error = r->error;
  return r->ok;
}

// The settings memcached's ssl_init and load_server_certificates apply, in
// their order, with their messages; plus: kTLS when asked (ithaca asks by
// default), a peer that closes without close_notify reads as end of stream.
std::shared_ptr<SSL_CTX> tls_context::build(std::string* error) {
  auto fail = [&](std::string message) {
    if (error) *error = std::move(message);
    return std::shared_ptr<SSL_CTX>();
  };
  if (std::string why; !net::openssl_load(&why)) return fail(why);
  ERR_clear_error();
  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  if (!ctx) return fail("Error creating the TLS context: " + ssl_error_text());
  SSL_CTX* c = ctx.get();
  SSL_CTX_set_min_proto_version(c, net::tls_min_version(cfg_.min_version));
  const std::string& key = cfg_.key.empty() ? cfg_.chain_cert : cfg_.key;
  if (SSL_CTX_use_certificate_chain_file(c, cfg_.chain_cert.c_str()) != 1) {
    return fail("Error loading the certificate chain: " + cfg_.chain_cert + " : " + ssl_error_text());
  }
  if (SSL_CTX_use_PrivateKey_file(c, key.c_str(), cfg_.keyformat) != 1) {
    return fail("Error loading the key: " + key + " : " + ssl_error_text());
  }
  if (SSL_CTX_check_private_key(c) != 1) {
    return fail("Error validating the certificate: " + ssl_error_text());
  }
  if (!cfg_.ca_cert.empty()) {
    if (SSL_CTX_load_verify_locations(c, cfg_.ca_cert.c_str(), nullptr) != 1) {
      return fail("Error loading the CA certificate: " + cfg_.ca_cert + " : " + ssl_error_text());
    }
    SSL_CTX_set_client_CA_list(c, SSL_load_client_CA_file(cfg_.ca_cert.c_str()));
  }
  SSL_CTX_set_verify(c, verify_flags(cfg_.verify_mode), nullptr);
  if (!cfg_.ciphers.empty() && SSL_CTX_set_cipher_list(c, cfg_.ciphers.c_str()) != 1) {
    ERR_clear_error();
    return fail("Error setting the provided cipher(s): " + cfg_.ciphers);
  }
  SSL_CTX_set_app_data(c, &counters_);
  if (cfg_.session_cache) {
    SSL_CTX_sess_set_new_cb(c, on_new_session);
    SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_SERVER);
    SSL_CTX_set_session_id_context(c, reinterpret_cast<const unsigned char*>(kSessionContext),
                                   sizeof kSessionContext - 1);
  } else {
    SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(c, 0);  // no TLS 1.3 tickets nobody could resume with
  }
  uint64_t options = SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF;
  if (cfg_.kernel_tls) options |= SSL_OP_ENABLE_KTLS;
  SSL_CTX_set_options(c, options);
  // An idle connection holds no record buffers (memcached does the same).
  SSL_CTX_set_mode(c, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return ctx;
}

}  // namespace ithaca::server
