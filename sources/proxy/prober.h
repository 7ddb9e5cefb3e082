// The one prober of a server marked down: sends `version` at growing,
// jittered intervals (retry_interval doubling up to retry_interval_max,
// +-20%) until the server answers, then marks it up. Started by whichever
// worker marked the server down (backend_server::record_failure returns true
// for exactly one caller), as a coroutine on that worker's machine; it ends
// when the server is up, retired (left the config), or the machine stops.
#pragma once

#include <memory>

#include "backend_server.h"

namespace ithaca::proxy {

void start_prober(std::shared_ptr<backend_server> server);  // [worker machine]

}  // namespace ithaca::proxy
