// -d: the process goes to the background as memcached's does (fork, setsid,
// chdir "/" unless core dumps are wanted, stdin and stdout to /dev/null), but
// the parent does not exit at once: it waits until the child says that every
// listener is bound (daemon_ready, from the pooler's on_ready) and exits 0,
// or exits with the child's own status when the start fails (a port in use).
// The child keeps the parent's stderr until it is ready, so its errors reach
// whoever started it; then stderr goes to /dev/null too (kept with -v, as
// memcached keeps its stdio when verbose).
#pragma once

#include <string>

namespace ithaca::server {

// Forks. In the parent it never returns: it waits for the child (at most
// kDaemonReadyTimeoutMs) and exits. In the child it returns true, a session
// leader with no terminal. False with *error (fork, pipe or setsid failed;
// nothing forked, or the child gives up). [main thread, before any other
// thread exists: fork copies only the calling thread, and a lock another
// thread held would stay locked in the child forever]
bool daemonize(bool keep_cwd, bool keep_stdio, std::string* error);

// The child's listeners are bound: tells the waiting parent (one byte on the
// pipe, then closes it) and points stderr at /dev/null unless stdio is kept.
// Once; a no-op in a process that did not daemonize. [the pooler thread]
void daemon_ready();

// How long the parent waits for the child's word before it gives up (exit 1,
// the child left running).
inline constexpr int kDaemonReadyTimeoutMs = 60'000;

}  // namespace ithaca::server
