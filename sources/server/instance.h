// The process: configuration, logging, the store, the worker machines and the
// pooler machine; runs until shutdown. Called from main() on the main thread,
// which only starts machines and waits for them.
#pragma once

#include "cli.h"
#include "config.h"

namespace ithaca::server {

// `cfg` was built from `cli` (make_config); a SIGHUP builds the next one from
// the same flags and the re-read file. Returns the process exit code.
int instance_run(const config::config& cfg, const config::cli_options& cli);

}  // namespace ithaca::server
