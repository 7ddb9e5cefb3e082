// The one prober of a server marked down: sends `version` at jittered
// intervals (+-20%) until the server answers, then marks it up. The interval
// starts at retry_interval and doubles up to retry_interval_max after a probe
// that timed out or got no proper answer; a refused connect (nothing listens:
// a server being restarted) costs the server nothing, so after one the
// interval is retry_interval again (at most: see `soon`). Started by whichever
// worker marked the server down (backend_server::record_failure returns true
// for exactly one caller), as a coroutine on that worker's machine; it ends
// when the server is up, retired (left the config), or the machine stops.
#pragma once

#include <cstdint>
#include <memory>

#include "backend_server.h"

namespace ithaca::proxy {

// `soon`: the server was marked down by the reconnect that follows a
// dropped connection (backend_conn::peer_closed), with no request waiting:
// most often a memcached being restarted, whose new process listens within
// tens of milliseconds. The first probe then comes after kSoonProbeMs, and
// refused probes double it up to retry_interval, so the restart costs the
// clients that short a fail-fast window rather than a whole retry_interval.
constexpr uint64_t kSoonProbeMs = 25;
void start_prober(std::shared_ptr<backend_server> server, bool soon = false);  // [worker machine]

}  // namespace ithaca::proxy
