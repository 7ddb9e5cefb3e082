// What both TLS layers (net::tls_conn for backends and replication,
// server::tls_stream for clients) do with an OpenSSL object on a socket:
// make it, run its calls to the end (drive_ssl: the waits are the caller's),
// ask whether kernel TLS took its sends over, and then send plaintext on the
// socket themselves. [any thread; no lock; suspends only in the caller's wait]
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <string>

struct ssl_st;
using SSL = ssl_st;
struct ssl_ctx_st;
using SSL_CTX = ssl_ctx_st;

namespace ithaca::net {

// An SSL object of `ctx` on socket `fd` (the fd stays the caller's), or
// nullptr with *why ("could not create the TLS connection").
SSL* new_ssl(int fd, SSL_CTX* ctx, std::string* why);

// Whether the kernel encrypts this connection's sends (kTLS took them at
// the handshake's end; SSL_OP_ENABLE_KTLS was asked for).
bool kernel_sends(SSL* ssl);

// SSL_write and SSL_read, for the templates here (which see no OpenSSL header).
int ssl_write(SSL* ssl, const void* buf, int len);
int ssl_read(SSL* ssl, void* buf, int len);

// With kTLS sends: whether a write may go to the socket as plaintext now,
// past SSL_write. Not while OpenSSL owes the peer a KeyUpdate, which only
// SSL_write sends (and which then fails or rekeys as OpenSSL can).
bool plaintext_write_allowed(SSL* ssl);

// How an SSL call that returned r <= 0 ended, from SSL_get_error and this
// thread's error queue (left clear): Read / Write when OpenSSL wants the
// socket so and the same call is to be made again; Done with *result 0 at a
// clean end of the stream (close_notify; EOF, which our contexts take as one:
// SSL_OP_IGNORE_UNEXPECTED_EOF) or -errno, -EPROTO for a TLS failure (a bad
// certificate, a plaintext peer, a corrupt record) with OpenSSL's reason in
// *reason ("certificate verify failed", its "error:...:" prefix cut).
enum class ssl_next { Read, Write, Done };
ssl_next after_ssl_call(SSL* ssl, int r, ssize_t* result, std::string* reason);
// Clears the error queue and errno before an SSL call, as after_ssl_call
// needs them to tell its ends apart.
void before_ssl_call();

// Runs `op` (an SSL call, returning int) until it succeeds: its result
// (> 0), or after_ssl_call's Done result. `wait(bool readable)` suspends
// the caller until the socket is ready as OpenSSL asks; it returns 0, or
// the -errno to give up with (-ETIMEDOUT, -ECANCELED).
template <class Op, class Wait>
ssize_t drive_ssl(SSL* ssl, Op op, Wait wait, std::string* reason) {
  for (;;) {
    before_ssl_call();
    const int r = op();
    if (r > 0) return r;
    ssize_t result = 0;
    const ssl_next next = after_ssl_call(ssl, r, &result, reason);
    if (next == ssl_next::Done) return result;
    if (const ssize_t w = wait(next == ssl_next::Read); w != 0) return w;
  }
}

// All of [p, p + n) through SSL_write, each call driven by drive_ssl with
// `wait`: n, or -errno (-EPIPE if the stream ended). Without
// SSL_MODE_ENABLE_PARTIAL_WRITE an SSL_write returns only once all of its
// length is written, and a retry after a wait repeats the same call, which
// is what OpenSSL requires.
template <class Wait>
ssize_t ssl_write_all(SSL* ssl, const char* p, size_t n, Wait wait, std::string* reason) {
  size_t done = 0;
  while (done < n) {
    const int len = static_cast<int>(std::min(n - done, size_t{1} << 30));
    const char* at = p + done;
    const ssize_t w = drive_ssl(
        ssl, [ssl, at, len] { return ssl_write(ssl, at, len); }, wait, reason);
    if (w <= 0) return w == 0 ? -EPIPE : w;
    done += static_cast<size_t>(w);
  }
  return static_cast<ssize_t>(done);
}

// One non-blocking send(2) of plaintext (a plain socket, or a kTLS one whose
// kernel makes the records), retried on EINTR: bytes taken (>= 0), -EAGAIN
// when the socket is full, or -errno.
ssize_t send_now(int fd, const void* buf, size_t len);

}  // namespace ithaca::net
