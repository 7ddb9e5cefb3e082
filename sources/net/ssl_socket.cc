#include "ssl_socket.h"

#include <sys/socket.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cerrno>
#include <string_view>

namespace ithaca::net {

SSL* new_ssl(int fd, SSL_CTX* ctx, std::string* why) {
  ERR_clear_error();
  SSL* ssl = ctx != nullptr ? SSL_new(ctx) : nullptr;  // takes its own reference on ctx
  if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1) {
    if (ssl) SSL_free(ssl);
    ERR_clear_error();
    if (why) *why = "could not create the TLS connection";
    return nullptr;
  }
  return ssl;
}

int ssl_write(SSL* ssl, const void* buf, int len) { return SSL_write(ssl, buf, len); }
int ssl_read(SSL* ssl, void* buf, int len) { return SSL_read(ssl, buf, len); }

void before_ssl_call() {
  ERR_clear_error();
  errno = 0;
}

ssl_next after_ssl_call(SSL* ssl, int r, ssize_t* result, std::string* reason) {
  const int e = SSL_get_error(ssl, r);
  if (e == SSL_ERROR_WANT_READ) return ssl_next::Read;
  if (e == SSL_ERROR_WANT_WRITE) return ssl_next::Write;
  if (e == SSL_ERROR_ZERO_RETURN) {
    *result = 0;
  } else if (e == SSL_ERROR_SYSCALL) {
    const int err = errno;
    const bool queued = ERR_peek_error() != 0;
    *result = err != 0 ? -err : queued ? -ECONNRESET : 0;  // nothing at all: EOF
  } else {
    char text[256] = {0};
    ERR_error_string_n(ERR_peek_last_error(), text, sizeof text);
    std::string_view t(text);
    if (const size_t at = t.rfind(':'); at != std::string_view::npos && at + 1 < t.size()) t.remove_prefix(at + 1);
    if (reason) *reason = std::string(t);
    *result = -EPROTO;
  }
  ERR_clear_error();
  return ssl_next::Done;
}

bool kernel_sends(SSL* ssl) { return BIO_get_ktls_send(SSL_get_wbio(ssl)) == 1; }

bool plaintext_write_allowed(SSL* ssl) { return SSL_get_key_update_type(ssl) == SSL_KEY_UPDATE_NONE; }

ssize_t send_now(int fd, const void* buf, size_t len) {
  for (;;) {
    const ssize_t w = ::send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w >= 0) return w;
    if (errno == EINTR) continue;
    return errno == EWOULDBLOCK ? -EAGAIN : -errno;
  }
}

}  // namespace ithaca::net
