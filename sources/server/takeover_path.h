// Where the takeover socket is (config.h `takeover_config`): the file's or
// the flag's path, else one derived from the run directory and the first TCP
// port, so that `ithaca --takeover` with the same flags finds the running one.
#pragma once

#include <string>

#include "config.h"

namespace ithaca::server {

// "" when there is none: takeover.socket spelled out empty, or no path can be
// derived (no run directory, no TCP listener, or its port is 0). [any thread]
std::string takeover_socket_path(const config::config& cfg);

}  // namespace ithaca::server
