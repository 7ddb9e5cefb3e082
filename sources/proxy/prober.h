// The one prober of a server marked down: sends `version` at jittered
// intervals (+-20%) until the server answers, then marks it up. The interval
// starts at retry_interval and doubles up to retry_interval_max after a probe
// that timed out or got no proper answer; a refused connect (nothing listens:
// a server being restarted) costs the server nothing, so after one the
// interval is retry_interval again. Started by whichever
// worker marked the server down (backend_server::record_failure returns true
// for exactly one caller), as a coroutine on that worker's machine; it ends
// when the server is up, retired (left the config), or the machine stops.
#pragma once

#include <memory>

#include "backend_server.h"

namespace ithaca::proxy {

void start_prober(std::shared_ptr<backend_server> server);  // [worker machine]

}  // namespace ithaca::proxy
