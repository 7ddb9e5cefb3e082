// `protocol: auto`: what a freshly connected backend speaks, asked once per
// connection before any request goes out on it. The connection sends `mn`
// (meta's no-op): memcached 1.6 answers `MN`, so it speaks meta; a server
// without meta (memcached before 1.6, most look-alikes) answers `ERROR` (or
// another error line), so it speaks ascii. Anything else, silence past the
// deadline or a close is a failed connect.
//
// Over TLS for a TLS pool: after the handshake, before any request.
//
// Thread: the connection's writer coroutine, on its worker; the socket is not
// shared yet (the reader reads only once the connection is Ready).
#pragma once

#include <cstdint>
#include <string>

#include "backend_call.h"
#include "backend_connect.h"
#include "backend_server.h"
#include "machinarium.h"

namespace ithaca::proxy {

struct protocol_probe {
  bool ok = false;         // learned is what the server speaks
  bool cancelled = false;  // the worker stops
  protocol::backend_protocol learned = protocol::backend_protocol::Ascii;
  failure_kind why = failure_kind::Connect;  // when not ok
  std::string error;                         // when not ok: for the log
};

// Within `deadline_ns` (the connect's own deadline: the probe is part of
// connecting).
protocol_probe probe_protocol(backend_link& link, int64_t deadline_ns);

}  // namespace ithaca::proxy
