// The process: configuration, logging, the store, the worker machines and the
// pooler machine; runs until shutdown. Called from main() on the main thread,
// which only starts machines and waits for them.
#pragma once

#include "cli.h"
#include "config.h"

namespace ithaca::server {

// Returns the process exit code.
int instance_run(const config::config& cfg, const std::string& config_path);

}  // namespace ithaca::server
