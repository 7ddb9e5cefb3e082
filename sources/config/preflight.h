// What --check-config looks at beyond validate(): the things a start (or a
// later request) would trip on that the file's own consistency cannot show.
// Errors are what the start would refuse anyway, caught before it: a TLS
// file that cannot be read, a spool directory that cannot be made, a
// process.user (-u) that does not exist. Warnings
// are what may be meant but is worth saying: a server written without a port
// (it takes 11211), a port another process holds right now (the start fails
// unless it is free by then; the running instance itself holds it when the
// file checked is its own). A spool directory that does not exist yet but
// can be made is neither: the start makes it.
#pragma once

#include <string>
#include <vector>

#include "config.h"

namespace ithaca::config {

struct preflight_report {
  std::string error;                  // "" = nothing the start would refuse
  std::vector<std::string> warnings;  // one sentence each
};

// Touches the file system and binds (and closes) test sockets: never on a
// worker. [main thread, --check-config]
preflight_report preflight(const config& cfg);

// The warnings a start logs too (no probing: what the config says alone).
// [any thread; pure]
std::vector<std::string> config_warnings(const config& cfg);

}  // namespace ithaca::config
