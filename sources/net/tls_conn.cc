#include "tls_conn.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ssl_socket.h"

namespace ithaca::net {

namespace {
ssize_t errno_of(mm::wait_status s) { return s == mm::wait_status::Cancelled ? -ECANCELED : -ETIMEDOUT; }
}  // namespace

std::unique_ptr<tls_conn> tls_conn::connect(mm::io& io, SSL_CTX* ctx, const std::string& server_name, bool check_name,
                                            int64_t deadline, std::string* why) {
  SSL* ssl = new_ssl(io.fd(), ctx, why);
  if (ssl == nullptr) return nullptr;
  if (!server_name.empty()) {
    SSL_set_tlsext_host_name(ssl, server_name.c_str());
    if (check_name) {
      // A name, or an IP address in the certificate's subjectAltName.
      X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
      if (X509_VERIFY_PARAM_set1_ip_asc(param, server_name.c_str()) != 1) {
        ERR_clear_error();
        SSL_set1_host(ssl, server_name.c_str());
      }
    }
  }
  SSL_set_connect_state(ssl);
  return handshake(io, ssl, true, deadline, why);
}

std::unique_ptr<tls_conn> tls_conn::accept(mm::io& io, SSL_CTX* ctx, int64_t deadline, std::string* why) {
  SSL* ssl = new_ssl(io.fd(), ctx, why);
  if (ssl == nullptr) return nullptr;
  SSL_set_accept_state(ssl);
  return handshake(io, ssl, false, deadline, why);
}

std::unique_ptr<tls_conn> tls_conn::handshake(mm::io& io, SSL* ssl, bool client, int64_t deadline, std::string* why) {
  std::unique_ptr<tls_conn> c(new tls_conn(io, ssl));
  const ssize_t r = c->drive([ssl] { return SSL_do_handshake(ssl); }, deadline);
  if (r > 0) {
    c->kernel_send_ = kernel_sends(ssl);
    return c;
  }
  if (why) {
    if (r == 0) {
      *why = client ? "closed by the server during the TLS handshake" : "closed by the peer during the TLS handshake";
    } else if (r == -ETIMEDOUT) {
      *why = "TLS handshake timed out";
    } else if (r == -ECANCELED) {
      *why = "cancelled";
    } else if (r == -EPROTO) {
      *why = "TLS handshake: " + c->last_error_;
      const long v = SSL_get_verify_result(ssl);
      if (v != X509_V_OK) *why += std::string(" (") + X509_verify_cert_error_string(v) + ")";
    } else {
      *why = std::string("TLS handshake: ") + std::strerror(static_cast<int>(-r));
    }
  }
  return nullptr;
}

tls_conn::~tls_conn() { SSL_free(ssl_); }

const char* tls_conn::version() const { return SSL_get_version(ssl_); }

std::string tls_conn::peer_subject() const {
  X509* cert = SSL_get1_peer_certificate(ssl_);
  if (cert == nullptr) return "";
  char buf[256] = {0};
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof buf);
  X509_free(cert);
  return buf;
}

mm::wait_status tls_conn::await(bool readable, int64_t deadline) {
  bool& busy = readable ? read_waiter_ : write_waiter_;
  if (busy) {
    // The other coroutine waits on the socket for this; it broadcasts once
    // its wait ends and it has made its own SSL call.
    ++changed_waiters_;
    const mm::wait_status w = changed_.wait(mm::millis_until(deadline));
    --changed_waiters_;
    return w;
  }
  busy = true;
  const mm::wait_status w =
      readable ? io_.wait_readable(mm::millis_until(deadline)) : io_.wait_writable(mm::millis_until(deadline));
  busy = false;
  // Woken coroutines run after this one suspends next, so after its retry.
  if (changed_waiters_ > 0) changed_.broadcast();
  return w;
}

ssize_t tls_conn::socket_wait::operator()(bool readable) const {
  const mm::wait_status w = conn->await(readable, deadline);
  return w == mm::wait_status::Ok ? 0 : errno_of(w);
}

template <class Op>
ssize_t tls_conn::drive(Op op, int64_t deadline) {
  return drive_ssl(ssl_, op, socket_wait{this, deadline}, &last_error_);
}

ssize_t tls_conn::read(void* buf, size_t len, mm::millis timeout) {
  const int64_t deadline = mm::deadline_after(timeout);
  const int n = static_cast<int>(std::min<size_t>(len, 1u << 30));
  return drive([this, buf, n] { return ssl_read(ssl_, buf, n); }, deadline);
}

ssize_t tls_conn::kernel_write(const char* p, size_t len, int64_t deadline) {
  size_t done = 0;
  while (done < len) {
    const ssize_t w = send_now(io_.fd(), p + done, len - done);
    if (w > 0) {
      done += static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && w != -EAGAIN) return w;
    if (const mm::wait_status s = await(false, deadline); s != mm::wait_status::Ok) return errno_of(s);
  }
  return static_cast<ssize_t>(done);
}

ssize_t tls_conn::write(const void* buf, size_t len, mm::millis timeout) {
  const int64_t deadline = mm::deadline_after(timeout);
  if (kernel_send_ && plaintext_write_allowed(ssl_)) {
    return kernel_write(static_cast<const char*>(buf), len, deadline);
  }
  return ssl_write_all(ssl_, static_cast<const char*>(buf), len, socket_wait{this, deadline}, &last_error_);
}

void tls_conn::request_key_update() {
  if (SSL_version(ssl_) == TLS1_3_VERSION) SSL_key_update(ssl_, SSL_KEY_UPDATE_REQUESTED);
  ERR_clear_error();
}

void tls_conn::shutdown() {
  ERR_clear_error();
  if (SSL_is_init_finished(ssl_)) SSL_shutdown(ssl_);
  ERR_clear_error();
}

}  // namespace ithaca::net
