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
// the process is ever swapped out. As root, RLIMIT_MEMLOCK is raised to
// unlimited first (CAP_SYS_RESOURCE). MCL_FUTURE locks every later mapping
// too, so under a finite limit (not root, no CAP_IPC_LOCK, or root about to
// become -u's user) every mapping past the limit would fail: a coroutine's
// stack, an item. Then nothing is locked and the warning says why and what
// to raise; memcached, which locks anyway, fails its allocations there.
// Returns "" or the warning, in memcached's words where it has them
// ("warning: -k invalid, mlockall() failed: ..."); the server goes on without
// the lock, as memcached does. [main thread, after the fork of -d: a child
// does not inherit the lock]
std::string lock_all_memory(bool dropping_root);

}  // namespace ithaca::server
