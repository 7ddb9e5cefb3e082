// Listening on a unix-domain socket path (`-s`, `listen.unix`) without
// harming what the path names, with the socket's mode set whatever the umask.
#pragma once

#include <memory>
#include <string>

#include "machinarium.h"

namespace ithaca::server {

// Binds and listens on `path` with permission bits `mode` (memcached's -a).
// An existing path is removed only if it is a stale socket: lstat says a
// socket and a connect to it is refused (nobody accepts on it, as after a
// killed server). Anything else at the path (a regular file, a directory, a
// symlink, a live server's socket) is left alone and the listen fails with
// memcached's "bind(): Address already in use" and what the path is.
// The mode is set on the socket before bind (so it is never wider than
// `mode`, even for a moment) and on the path after (so it is exactly `mode`
// where the umask would have cleared bits). Returns nullptr and sets *error
// on failure. [pooler machine, at start-up]
std::unique_ptr<mm::io> listen_unix(const std::string& path, int backlog, unsigned mode, std::string* error);

}  // namespace ithaca::server
