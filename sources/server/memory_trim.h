// Gives freed heap memory back to the kernel once the clients that used it
// are gone. glibc keeps what a burst of clients freed (reply buffers, large
// values read from backends, request slots) in its arenas: after 100 clients
// of the router's stress run left, RSS stayed about 125 MiB above its start,
// of which malloc_trim(0) returned 80 MiB. Trimming costs a walk of every
// arena's free chunks under that arena's lock, so it runs only when the
// number of client connections has fallen to half its recent peak (or to
// none), at most once per kMinIntervalMs, on the blocking pool (the pooler's
// machine never waits on it beyond its own coroutine).
#pragma once

#include "conn_registry.h"

namespace ithaca::server {

// [the pooler machine; its "memory trim" coroutine] Runs until cancelled.
void memory_trim_main(const conn_registry& conns);

}  // namespace ithaca::server
