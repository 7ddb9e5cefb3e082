// Tells systemd (Type=notify) that the server is ready: every listener is
// bound. systemd's notification protocol spoken directly (a datagram to
// $NOTIFY_SOCKET); a no-op when not started by systemd (NOTIFY_SOCKET
// unset). [pooler machine, once]
//
// After a takeover (takeover_client.h) the new process is not the unit's
// main process yet: it says MAINPID=its pid with READY=1 (the unit needs
// NotifyAccess=all) and waits (the protocol's BARRIER=1, 5 s at most) until systemd
// has read it, so the old process's exit that follows is not taken for the
// service's end.
#pragma once

namespace ithaca::server {

// Before notify_ready: this process took another's place. [main thread]
void notify_as_new_main_pid();
void notify_ready();
// A takeover failed after the new process may have said MAINPID (takeover_
// server.h): this process says it is the main one again, and ready. [any thread]
void notify_main_pid_again();

}  // namespace ithaca::server
