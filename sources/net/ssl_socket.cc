#include "ssl_socket.h"

#include <sys/socket.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cerrno>

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
