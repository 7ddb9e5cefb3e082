// -P / process.pid_file: memcached's pid file. Written once every listener is
// bound, as memcached writes it: a warning if the file names a process still
// running, then FILE.tmp renamed over FILE (a reader never sees it empty).
// A failure is logged and the server goes on (memcached's behaviour).
// Removed at exit (memcached removes it only with -d; ithaca whenever it
// wrote it, so a foreground run under a supervisor leaves none behind).
#pragma once

#include <string>

namespace ithaca::server {

// [the pooler thread, after the user switch: written as the user, who
// removes it at exit]
bool write_pid_file(const std::string& path);

// Unlinks it, logging a failure (memcached's "Could not remove the pid file").
// [main thread, at exit; as the switched user, so the directory must let it]
void remove_pid_file(const std::string& path);

}  // namespace ithaca::server
