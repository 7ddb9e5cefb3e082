#include "ready_notify.h"

#ifdef ITHACA_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include <cstring>

#include <spdlog/spdlog.h>

namespace ithaca::server {

void notify_ready() {
#ifdef ITHACA_HAVE_SYSTEMD
  // A datagram on a local socket: it does not block.
  const int rc = sd_notify(0, "READY=1");
  if (rc < 0) spdlog::warn("sd_notify READY=1: {}", std::strerror(-rc));
#endif
}

}  // namespace ithaca::server
