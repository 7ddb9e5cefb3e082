// One client connection over TLS: OpenSSL on the non-blocking socket itself
// (SSL_set_fd, so kTLS can take the records over where the kernel has the
// `tls` module). Every call runs in the connection's coroutine: an SSL call
// that wants the socket readable or writable suspends the coroutine on
// mm::io's readiness waits (wait_readable / wait_writable), within the
// caller's deadline; the worker never blocks. The mm::io is never read
// through (its io_uring multishot receive is never armed, so no byte is
// taken from the socket behind OpenSSL's back); it is written through only
// once kTLS sends are on, when the kernel encrypts what a plain write gives.
#pragma once

#include <memory>
#include <string>

#include "stream.h"
#include "tls_context.h"

struct ssl_st;
using SSL = ssl_st;

namespace ithaca::server {

class tls_stream final : public stream {
 public:
  // Runs the server handshake on `io` with the context's current SSL_CTX.
  // nullptr on failure (counted in ssl_handshake_errors; *why says what
  // happened: OpenSSL's reason, "timed out", "cancelled", "closed").
  // [machine: the connection's coroutine; suspends]
  // `peer` is the listener's btls:/mtls: override of ssl_verify_mode.
  static std::unique_ptr<tls_stream> accept(mm::io& io, tls_context& ctx, config::peer_check peer, mm::millis timeout,
                                            std::string* why);
  ~tls_stream() override;  // frees the SSL object (the fd stays the io's)

  int fd() const override { return io_.fd(); }
  ssize_t read(void* buf, size_t len, mm::millis timeout) override;
  // With kernel TLS sending (kernel_send_), the plaintext goes to the
  // socket as a plain connection's does (mm::io::writev: the iovecs that
  // point into items, no copy here; the kernel makes the records).
  // Otherwise: gathers small pieces into records of up to ssl_wbuf_size
  // bytes (one SSL_write each); a piece at least that large is written from
  // its own memory. Everything, or -errno.
  ssize_t writev(const iovec* iov, int count, mm::millis timeout) override;
  ssize_t try_send(const void* buf, size_t len) override;
  mm::wait_status wait_writable(mm::millis timeout) override { return io_.wait_writable(timeout); }
  // Sends close_notify if the socket takes it at once (no wait).
  void shutdown() override;
  // Whether the kernel encrypts this connection's sends / receives (kTLS).
  bool ktls_send() const { return kernel_send_; }
  bool ktls_recv() const;
  const char* version() const;  // "TLSv1.3"

 private:
  tls_stream(mm::io& io, SSL* ssl, tls_context& ctx) : io_(io), ssl_(ssl), ctx_(ctx) {}
  // net::drive_ssl's wait: the socket's readiness until `deadline`, 0 or -errno.
  struct socket_wait {
    tls_stream* s;
    int64_t deadline;
    ssize_t operator()(bool readable) const;
  };
  // Runs `op` (an SSL call) until it succeeds, waiting for the socket as
  // OpenSSL asks; its result (> 0), 0 at a clean end, or -errno.
  template <class Op>
  ssize_t drive(Op op, int64_t deadline);
  ssize_t failed(ssize_t r, const std::string& reason);
  ssize_t write_all(const char* p, size_t n, int64_t deadline);
  // Whether this write may bypass SSL_write: kTLS sends are on and OpenSSL
  // has no write of its own to make first (net::plaintext_write_allowed).
  bool kernel_writes() const;

  mm::io& io_;
  SSL* ssl_;
  tls_context& ctx_;
  bool handshaking_ = true;   // failures before the end count as handshake errors
  bool kernel_send_ = false;  // kTLS took the sends over at the handshake's end
};

}  // namespace ithaca::server
