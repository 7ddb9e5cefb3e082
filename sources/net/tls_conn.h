// One TLS connection over a non-blocking socket (OpenSSL on the fd itself,
// SSL_set_fd), which TWO coroutines of one machine may use at once: one
// reading, one writing (the router's backend connection: its writer writes
// requests while its reader parses replies; a replication master's sender and
// its ack reader). Client side (a backend server, a replication master) or
// server side (the replication master's slave listener, mutual TLS).
//
// Why it is sound: both coroutines run on one machine and no SSL call
// suspends, so OpenSSL's object is never entered twice at once. What needs
// care is the waiting. SSL_read may want the socket writable and SSL_write
// may want it readable (a TLS 1.3 KeyUpdate, a session ticket, an alert),
// and machinarium's io has one waiter slot per direction. So:
//   - a coroutine whose SSL call wants direction D waits on the socket for D
//     if nobody does; it is then D's socket waiter;
//   - if the other coroutine is already D's socket waiter, it waits on
//     `changed_` instead: the socket waiter, once woken, runs its own SSL
//     call (which takes the record both may need) before it can suspend
//     again, and broadcasts `changed_` when its wait ends, so the second
//     coroutine retries its call after that and finds the record processed
//     (or waits on the socket itself, being the only one left).
// Every wait, on the socket or on `changed_`, ends by the caller's deadline;
// a socket wait that ends for any reason (ready, timed out, cancelled, the
// fd shut down) broadcasts, so no coroutine sleeps on `changed_` for a wake-up
// that went to the other.
//
// What OpenSSL itself allows: its record layer holds ONE unfinished write. A
// handshake message that SSL_read would have to send while an SSL_write is
// unfinished (WANT_WRITE, to be retried) is refused (SSL_R_BAD_LENGTH /
// BAD_WRITE_RETRY; seen in a test with post-handshake authentication). The
// contexts made here never lead there: renegotiation is off, no post-handshake
// authentication is offered, and OpenSSL 3 sends the answer to a peer's
// KeyUpdate, and a warning alert, only once the unfinished write is done
// (ssl3_write_bytes: "unless we have writes pending"). So SSL_read writes
// only when no application write is unfinished, and the shared waits above
// cover the rest.
//
// Kernel TLS: where the kernel has the `tls` module, OpenSSL hands it the
// send keys at the handshake's end (SSL_OP_ENABLE_KTLS, tls_setup.cc). Then
// write() sends the plaintext with send(2) itself (one copy fewer: OpenSSL
// would copy into its record first), waiting for writable through the same
// shared waits; a KeyUpdate OpenSSL owes the peer goes back through
// SSL_write. Reads stay with SSL_read. [machine: the owner's worker; no lock]
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "machinarium.h"

struct ssl_st;
using SSL = ssl_st;
struct ssl_ctx_st;
using SSL_CTX = ssl_ctx_st;

namespace ithaca::net {

class tls_conn {
 public:
  // The client handshake on `io` (connected), within `deadline` (mm's
  // monotonic ns). `server_name` ("" = none) is sent as SNI and, when
  // `check_name`, must be the certificate's. nullptr and *why ("certificate
  // verify failed (unable to get local issuer certificate)", "timed out",
  // "closed by the peer") on failure. [machine; suspends]
  static std::unique_ptr<tls_conn> connect(mm::io& io, SSL_CTX* ctx, const std::string& server_name, bool check_name,
                                           int64_t deadline, std::string* why);
  // The server handshake (a context from make_mutual_server_ctx requires
  // and checks the peer's certificate). [machine; suspends]
  static std::unique_ptr<tls_conn> accept(mm::io& io, SSL_CTX* ctx, int64_t deadline, std::string* why);
  ~tls_conn();  // frees the SSL object; the fd stays the io's
  tls_conn(const tls_conn&) = delete;
  tls_conn& operator=(const tls_conn&) = delete;

  // At least 1 byte up to len; 0 at the end of the stream (close_notify or
  // EOF); -errno (-ETIMEDOUT, -ECANCELED, -EPROTO for a TLS failure).
  ssize_t read(void* buf, size_t len, mm::millis timeout);
  // All of len, or -errno. A retry after a timeout must not be attempted
  // (the connection is given up, as for a plain socket).
  ssize_t write(const void* buf, size_t len, mm::millis timeout);
  // close_notify if the socket takes it at once; never waits.
  void shutdown();
  // Asks the peer to update its keys too (TLS 1.3), sent with the next
  // write: the peer's reader then has a record to answer by writing. [tests]
  void request_key_update();

  const char* version() const;                                   // "TLSv1.3"
  bool kernel_send() const { return kernel_send_; }              // the kernel encrypts the sends (kTLS)
  std::string peer_subject() const;                              // the peer certificate's subject, "" without one
  const std::string& last_error() const { return last_error_; }  // OpenSSL's reason of the last -EPROTO

 private:
  tls_conn(mm::io& io, SSL* ssl) : io_(io), ssl_(ssl) {}
  static std::unique_ptr<tls_conn> handshake(mm::io& io, SSL* ssl, bool client, int64_t deadline, std::string* why);
  // drive_ssl's wait (ssl_socket.h): await() until `deadline`, 0 or -errno.
  struct socket_wait {
    tls_conn* conn;
    int64_t deadline;
    ssize_t operator()(bool readable) const;
  };
  // Runs `op` (an SSL call) until it succeeds, waiting as above; its result
  // (> 0), 0 at a clean end, or -errno (-EPROTO: OpenSSL's reason in last_error_).
  template <class Op>
  ssize_t drive(Op op, int64_t deadline);
  mm::wait_status await(bool readable, int64_t deadline);
  // write() with kTLS sends: send(2) of the plaintext until all is taken.
  ssize_t kernel_write(const char* p, size_t len, int64_t deadline);

  mm::io& io_;
  SSL* ssl_;
  bool read_waiter_ = false;   // a coroutine waits on the socket for readable
  bool write_waiter_ = false;  // ... for writable
  bool kernel_send_ = false;   // kTLS took the sends over at the handshake's end
  int changed_waiters_ = 0;    // coroutines waiting on changed_
  mm::cond changed_;           // a socket wait ended: retry the SSL call
  std::string last_error_;
};

}  // namespace ithaca::net
