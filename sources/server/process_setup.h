// memcached's process-level flags: -d -u -P -r -k -L (`process:` in the file
// for all but -d), applied in memcached's order, with its words and exit codes:
//
//   before any thread (process_start):
//     -r  raise RLIMIT_CORE                    ("failed to ensure corefile creation", 71)
//     root without -u: memcached mode refuses  ("must add '-u root' to start as root", 64);
//         ithaca's own command line runs on, with a warning
//     -u  look the user up                     ("can't find the user X to switch to", 67)
//     -d  fork; the parent waits for the child's listeners (daemon.h)
//     -k  mlockall                             ("warning: -k invalid, mlockall() failed: ...")
//   (-L is the store's: its hash table advises its mappings; large_pages.h
//   says what it got, in process_log_start)
//   once every listener is bound (process_ready, the pooler's on_ready):
//     -u  hand the unix sockets to the user, then become it (run_as_user.h);
//         memcached switches before it binds, ithaca after, so ports below
//         1024 work
//     -P  write the pid file, as the user (pid_file.h), as memcached does
//         READY=1 to systemd (ready_notify.h), the byte to -d's parent
//   at exit (process_finish):
//     -P  remove the pid file
#pragma once

#include "cli.h"
#include "config.h"

namespace ithaca::server {

// -1 to go on, else the exit code (the message is on stderr). In -d's parent
// it does not return. `cli.config_path` is made absolute under -d (the daemon
// runs in "/", and SIGHUP re-reads it). [main thread, before any other thread]
int process_start(const config::config& cfg, config::cli_options& cli);

// What the start has to say, once logging is up (root without -u, -k's
// warning, -L's report, -u ignored when not root). [main thread]
void process_log_start(const config::config& cfg);

// Every listener is bound. False when the user switch failed (logged); the
// start then fails. [the pooler thread, once]
bool process_ready(const config::config& cfg);

// The exit code to use for `rc` (a failed switch's EX_OSERR over the
// instance's 1), after removing the pid file if this process wrote it.
// [main thread, after every machine stopped]
int process_finish(int rc);

// A takeover handed this process's place over: the pid file is the new
// process's now, and stays at exit. [pooler thread, before its shutdown]
void process_handed_over();
// A takeover failed after the new process may have written the pid file and
// told systemd its pid: this process's pid goes back into both. [pooler thread]
void process_resumed();

}  // namespace ithaca::server
