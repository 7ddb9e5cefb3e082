// One request line out, one answer line back (plain or TLS), on a
// connection nobody else uses yet: the two checks a backend server gets outside its pipelined traffic,
// the prober's `version` and protocol auto's `mn`.
//
// Thread: the caller's coroutine; every wait ends by `deadline_ns`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "backend_connect.h"
#include "machinarium.h"

namespace ithaca::proxy {

// Sends `request`, then reads until `line` holds a newline. Returns 1 when it
// does; -E2BIG when `max` bytes came without one; else the failed write's or
// read's result (0: closed by the server, -ETIMEDOUT, -ECANCELED, -errno).
ssize_t exchange_line(backend_link& link, std::string_view request, int64_t deadline_ns, std::size_t max,
                      std::string& line);

}  // namespace ithaca::proxy
