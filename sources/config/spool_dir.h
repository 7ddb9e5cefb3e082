// The directory of reliable deletes' spool (proxy/delete_spool.h): which
// one a config uses, and whether it can serve. A spool that cannot write its
// records answers every spooled delete with the failure, so the directory is
// checked before it is relied on: at start (made, mkdir -p, and written to;
// the start fails otherwise), by --check-config and at a SIGHUP that names
// another one (looked at only, nothing made; refused otherwise).
#pragma once

#include <string>

#include "config.h"

namespace ithaca::config {

// Whether the config runs a spool at all: a router with pools (the spool
// machine starts then, instance.cc). [any thread; pure]
bool uses_spool(const config& cfg);

// router.spool_dir, or its default: under systemd's StateDirectory= when the
// service has one ($STATE_DIRECTORY/spool: /var/lib/ithaca/spool with the
// bundled unit, kept across restarts and reboots); else beside the cache's
// large values ($TMPDIR or /tmp) in "ithaca-spool-PORT" by the first tcp
// port, so a restart on the same port finds it and two routers on one host
// do not share one; without a fixed port, "ithaca-spool-pid-PID" (nothing to
// find again after a restart). [any thread]
std::string spool_dir_of(const config& cfg);

// Without changing anything: "" when `dir` is a directory this process may
// create files in, or can be made one (its nearest existing ancestor is such
// a directory); else why not, naming the path ("/a/b: not a directory",
// "/ro: Read-only file system"). Blocks on the file system: never on a
// worker. [main thread, --check-config, a reload's blocking call]
std::string spool_dir_problem(const std::string& dir);

// Makes `dir` and its missing parents (mode 0700) and proves it writable by
// creating and removing a file in it. False with *why (as above) if it
// cannot. *made (if given): `dir` itself did not exist before. [main thread
// at start; the spool machine]
bool make_spool_dir(const std::string& dir, std::string* why, bool* made = nullptr);

}  // namespace ithaca::config
