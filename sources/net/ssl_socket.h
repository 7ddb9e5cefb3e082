// What both TLS layers (net::tls_conn for backends and replication,
// server::tls_stream for clients) do with an OpenSSL object on a socket:
// make it, ask whether kernel TLS took its sends over, and then send
// plaintext on the socket themselves. [any thread; no lock; never suspends]
#pragma once

#include <sys/types.h>

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

// With kTLS sends: whether a write may go to the socket as plaintext now,
// past SSL_write. Not while OpenSSL owes the peer a KeyUpdate, which only
// SSL_write sends (and which then fails or rekeys as OpenSSL can).
bool plaintext_write_allowed(SSL* ssl);

// One non-blocking send(2) of plaintext (a plain socket, or a kTLS one whose
// kernel makes the records), retried on EINTR: bytes taken (>= 0), -EAGAIN
// when the socket is full, or -errno.
ssize_t send_now(int fd, const void* buf, size_t len);

}  // namespace ithaca::net
