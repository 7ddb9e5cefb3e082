// Opening a connection to a backend server: connect, then for a TLS pool the
// client handshake, within one deadline (the pool's connect_timeout). Every
// place the router connects uses it: the backend connection's writer, the
// prober (health check) and the delete spool's replay; routes that reach a
// server (warm-up, shadow, failover, ...) do so through a backend connection.
// A handshake that fails is a failed connect (failure_kind::Connect): the
// server is marked down as for a refused connect, and `stats servers` shows
// the reason (backend_server::last_error).
//
// Thread: the caller's coroutine on its worker (or the spool machine).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backend_server.h"
#include "machinarium.h"
#include "tls_conn.h"

namespace ithaca::proxy {

struct backend_link {
  std::unique_ptr<mm::io> io;          // null on failure
  std::unique_ptr<net::tls_conn> tls;  // set for a TLS pool
  int err = 0;                         // the connect's -errno (0 when it connected)
  bool cancelled = false;              // the worker stops
  failure_kind why = failure_kind::Connect;
  std::string error;  // on failure, for the log and `stats servers`

  explicit operator bool() const { return io != nullptr; }
  // Plain or TLS, the same results as mm::io's read / write.
  ssize_t read(void* buf, size_t len, mm::millis timeout) {
    return tls ? tls->read(buf, len, timeout) : io->read(buf, len, timeout);
  }
  ssize_t write(const void* buf, size_t len, mm::millis timeout) {
    return tls ? tls->write(buf, len, timeout) : io->write(buf, len, timeout);
  }
  // Sends close_notify (TLS, if the socket takes it at once) and closes.
  void close();
};

// Connects to `s` and, for a TLS pool, shakes hands, all by `deadline_ns`.
backend_link connect_backend(const backend_server& s, int64_t deadline_ns);

}  // namespace ithaca::proxy
