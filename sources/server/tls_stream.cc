#include "tls_stream.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include <spdlog/spdlog.h>

#include "ssl_socket.h"

namespace ithaca::server {

namespace {
ssize_t errno_of(mm::wait_status s) { return s == mm::wait_status::Cancelled ? -ECANCELED : -ETIMEDOUT; }
}  // namespace

std::unique_ptr<tls_stream> tls_stream::accept(mm::io& io, tls_context& ctx, config::peer_check peer,
                                               mm::millis timeout, std::string* why) {
  std::shared_ptr<SSL_CTX> c = ctx.current();
  SSL* ssl = net::new_ssl(io.fd(), c.get(), why);  // takes its own reference on the context
  if (!ssl) {
    ctx.counters().handshake_errors.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  // memcached's btls: / mtls: listeners, over the context's ssl_verify_mode.
  if (peer == config::peer_check::None) SSL_set_verify(ssl, SSL_VERIFY_NONE, nullptr);
  if (peer == config::peer_check::Required)
    SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  std::unique_ptr<tls_stream> s(new tls_stream(io, ssl, ctx));
  const ssize_t r = s->drive([ssl] { return SSL_accept(ssl); }, mm::deadline_after(timeout));
  if (r <= 0) {
    ctx.counters().handshake_errors.fetch_add(1, std::memory_order_relaxed);
    if (why) {
      if (r == 0)
        *why = "closed";
      else if (r == -ETIMEDOUT)
        *why = "timed out";
      else if (r == -ECANCELED)
        *why = "cancelled";
      else if (r != -EPROTO)
        *why = std::strerror(static_cast<int>(-r));
    }
    return nullptr;
  }
  s->handshaking_ = false;
  ctx.counters().handshakes.fetch_add(1, std::memory_order_relaxed);
  s->kernel_send_ = net::kernel_sends(ssl);
  if (s->kernel_send_) ctx.counters().ktls_send.fetch_add(1, std::memory_order_relaxed);
  return s;
}

tls_stream::~tls_stream() { SSL_free(ssl_); }

const char* tls_stream::version() const { return SSL_get_version(ssl_); }
bool tls_stream::ktls_recv() const { return BIO_get_ktls_recv(SSL_get_rbio(ssl_)) == 1; }

bool tls_stream::kernel_writes() const { return kernel_send_ && net::plaintext_write_allowed(ssl_); }

ssize_t tls_stream::socket_wait::operator()(bool readable) const {
  const mm::millis left = mm::millis_until(deadline);
  const mm::wait_status w = readable ? s->io_.wait_readable(left) : s->io_.wait_writable(left);
  return w == mm::wait_status::Ok ? 0 : errno_of(w);
}

// After a failure: a TLS one past the handshake is counted (handshake
// failures are counted by accept) and logged.
ssize_t tls_stream::failed(ssize_t r, const std::string& reason) {
  if (r == -EPROTO) {
    if (!handshaking_) ctx_.counters().proto_errors.fetch_add(1, std::memory_order_relaxed);
    spdlog::debug("tls fd {}: {}", io_.fd(), reason);
  }
  return r;
}

template <class Op>
ssize_t tls_stream::drive(Op op, int64_t deadline) {
  std::string reason;
  const ssize_t r = net::drive_ssl(ssl_, op, socket_wait{this, deadline}, &reason);
  return r > 0 ? r : failed(r, reason);
}

ssize_t tls_stream::read(void* buf, size_t len, mm::millis timeout) {
  const int n = static_cast<int>(std::min<size_t>(len, INT_MAX));
  return drive([this, buf, n] { return net::ssl_read(ssl_, buf, n); }, mm::deadline_after(timeout));
}

ssize_t tls_stream::write_all(const char* p, size_t n, int64_t deadline) {
  std::string reason;
  const ssize_t r = net::ssl_write_all(ssl_, p, n, socket_wait{this, deadline}, &reason);
  return r >= 0 ? r : failed(r, reason);
}

ssize_t tls_stream::writev(const iovec* iov, int count, mm::millis timeout) {
  if (kernel_writes()) return io_.writev(iov, count, timeout);
  const int64_t deadline = mm::deadline_after(timeout);
  const size_t record = ctx_.wbuf_size();
  size_t total = 0;
  for (int i = 0; i < count; i++) total += iov[i].iov_len;
  // Gathered pieces: allocated per call (an idle connection holds none) and
  // stable across a retry (OpenSSL wants the same bytes again).
  std::string gather;
  auto flush = [&]() -> ssize_t {
    if (gather.empty()) return 0;
    const ssize_t w = write_all(gather.data(), gather.size(), deadline);
    gather.clear();
    return w < 0 ? w : 0;
  };
  // Records filled to `record` bytes (memcached's ssl_wbuf_size): a piece
  // that does not fit is split across two, so 4 KiB replies go four to a
  // 16 KiB record rather than three.
  for (int i = 0; i < count; i++) {
    const char* p = static_cast<const char*>(iov[i].iov_base);
    size_t n = iov[i].iov_len;
    while (n > 0) {
      if (gather.empty() && n >= record) {
        // Whole records straight from the piece's own memory (a large value).
        const size_t whole = n - n % record;
        if (ssize_t r = write_all(p, whole, deadline); r < 0) return r;
        p += whole;
        n -= whole;
        continue;
      }
      if (gather.capacity() == 0) gather.reserve(std::min(record, total));
      const size_t take = std::min(n, record - gather.size());
      gather.append(p, take);
      p += take;
      n -= take;
      if (gather.size() == record) {
        if (ssize_t r = flush(); r < 0) return r;
      }
    }
  }
  if (ssize_t r = flush(); r < 0) return r;
  return static_cast<ssize_t>(total);
}

ssize_t tls_stream::try_send(const void* buf, size_t len) {
  if (kernel_writes()) return net::send_now(io_.fd(), buf, len);
  ERR_clear_error();
  const int n = static_cast<int>(std::min<size_t>(len, ctx_.wbuf_size()));
  const int r = SSL_write(ssl_, buf, n);
  if (r > 0) return r;
  const int e = SSL_get_error(ssl_, r);
  ERR_clear_error();
  if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) return -EAGAIN;
  return -EPIPE;
}

void tls_stream::shutdown() {
  if (handshaking_) return;
  ERR_clear_error();
  SSL_shutdown(ssl_);  // one attempt: close_notify if the socket has room; never waits
  ERR_clear_error();
}

}  // namespace ithaca::server
