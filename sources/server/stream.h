// A client connection's byte stream, as the client coroutine (client.cc) and
// the watcher (watcher.cc) use it: plain (mm::io as is) or TLS
// (tls_stream.h). Results as mm::io's: >= 0 bytes, 0 at end of stream,
// -errno (-ETIMEDOUT, -ECANCELED, ...). Only the coroutine that owns the
// connection calls these, on its worker machine.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include "machinarium.h"
#include "ssl_socket.h"

namespace ithaca::server {

class stream {
 public:
  virtual ~stream() = default;
  virtual int fd() const = 0;
  // At least 1 byte up to len, 0 at end of stream, or -errno.
  virtual ssize_t read(void* buf, size_t len, mm::millis timeout) = 0;
  // Everything or -errno.
  virtual ssize_t writev(const iovec* iov, int count, mm::millis timeout) = 0;
  // One non-blocking attempt: bytes written (> 0), -EAGAIN, or -errno. A
  // caller that got -EAGAIN retries with the same bytes first (TLS needs it).
  virtual ssize_t try_send(const void* buf, size_t len) = 0;
  virtual mm::wait_status wait_writable(mm::millis timeout) = 0;
  // Before the socket closes: TLS sends close_notify if the socket takes it
  // at once (never waits); plain has nothing to say.
  virtual void shutdown() {}
};

// The plaintext stream: mm::io's calls unchanged.
class plain_stream final : public stream {
 public:
  explicit plain_stream(mm::io& io) : io_(io) {}
  int fd() const override { return io_.fd(); }
  ssize_t read(void* buf, size_t len, mm::millis timeout) override { return io_.read(buf, len, timeout); }
  ssize_t writev(const iovec* iov, int count, mm::millis timeout) override { return io_.writev(iov, count, timeout); }
  ssize_t try_send(const void* buf, size_t len) override { return net::send_now(io_.fd(), buf, len); }
  mm::wait_status wait_writable(mm::millis timeout) override { return io_.wait_writable(timeout); }

 private:
  mm::io& io_;
};

}  // namespace ithaca::server
