#include "backend_connect.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace ithaca::proxy {

void backend_link::close() {
  if (tls) tls->shutdown();
  tls.reset();
  if (io) io->close();
  io.reset();
}

backend_link connect_backend(const backend_server& s, int64_t deadline_ns) {
  backend_link l;
  if (!s.address_ok()) {
    l.error = "bad address";
    return l;
  }
  int err = 0;
  l.io = mm::connect(s.sockaddr(), mm::millis_until(deadline_ns), &err);
  l.err = err;
  if (!l.io) {
    l.cancelled = err == -ECANCELED;
    l.why = err == -ETIMEDOUT ? failure_kind::Timeout : failure_kind::Connect;
    l.error = err != 0 ? std::strerror(-err) : "connect failed";
    return l;
  }
  // Before the handshake: its flights are small writes too.
  if (s.sockaddr().storage.ss_family != AF_UNIX) mm::set_nodelay(l.io->fd(), true);
  if (!s.tls_ctx()) return l;
  const config::backend_tls& t = s.settings().tls;
  std::string why;
  l.tls = net::tls_conn::connect(*l.io, s.tls_ctx().get(), t.server_name, t.verify_peer(), deadline_ns, &why);
  if (!l.tls) {
    l.cancelled = why == "cancelled";
    // A handshake refused is a failed connect (the server's certificate,
    // a plaintext server); one that ran out of time is a connect timeout.
    l.why = why == "TLS handshake timed out" ? failure_kind::Timeout : failure_kind::Connect;
    l.error = why;
    l.io->close();
    l.io.reset();
  }
  return l;
}

}  // namespace ithaca::proxy
