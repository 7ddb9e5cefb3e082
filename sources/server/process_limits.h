// memcached's -r and -k, on the process's resource limits and memory.
#pragma once

#include <string>

namespace ithaca::server {

// -r / process.core_dumps: RLIMIT_CORE to unlimited, else its soft limit to
// its hard one (memcached's two tries). False when the soft limit is still 0
// (no core could be written): memcached then says "failed to ensure corefile
// creation" and exits EX_OSERR (71). [main thread, at start]
bool raise_core_limit();

// -k / process.lock_memory: mlockall(MCL_CURRENT | MCL_FUTURE), so no page of
// the process is ever swapped out. Started as root, RLIMIT_MEMLOCK is raised
// to unlimited first: after -u drops root, every new mapping (a coroutine
// stack, a malloc arena) must still fit under it, or it would fail. Returns
// "" or memcached's warning ("warning: -k invalid, mlockall() failed: ...");
// the server goes on without the lock, as memcached does. [main thread,
// after the fork of -d: a child does not inherit the lock]
std::string lock_all_memory();

}  // namespace ithaca::server
