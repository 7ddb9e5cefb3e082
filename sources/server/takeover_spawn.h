// SIGUSR2 (nginx's binary upgrade): the running process starts its binary
// again, by path (so a package upgrade's new file is what runs), with the same
// arguments plus --takeover; the new process then takes this one's place
// through the takeover socket (takeover_client.h).
#pragma once

#include <sys/types.h>

namespace ithaca::server {

// Remembers the command line and the binary's path. [main, first thing]
void takeover_remember_command(int argc, char** argv);

// Starts the new process (its signal mask emptied, SIGPIPE back to its
// default) and returns its pid, or -1 (logged). [pooler machine: the
// signals coroutine]
pid_t takeover_spawn();

}  // namespace ithaca::server
