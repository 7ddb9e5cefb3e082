// Tells systemd (Type=notify) that the server is ready: every listener is
// bound. Through libsystemd's sd_notify when built with it; a no-op without
// it (the unit is then Type=simple) or when not started by systemd
// (NOTIFY_SOCKET unset). [pooler machine, once]
#pragma once

namespace ithaca::server {

void notify_ready();

}  // namespace ithaca::server
