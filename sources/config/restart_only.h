// The settings a running server cannot change: a SIGHUP that finds them
// changed in the file names them in a warning and applies everything else.
#pragma once

#include <string>
#include <vector>

#include "config.h"

namespace ithaca::config {

// The "section.key" names of the restart-only settings that differ between
// `running` (what the server started with) and `fresh` (the reloaded file,
// with the command-line flags on top), in config order. Restart-only: the
// listeners (bound once by the pooler), the worker count, io backend and
// coroutine stack size (machines start once), hash_power (the bucket array
// is never resized), large_value_dir, read_buffer_size, and the log file and
// queue (the logger is built once), and `tls` (a SIGHUP re-reads the same
// certificate files; server/tls_context.h), and authentication (server.auth_file,
// server.sasl, server.sasl_pwdb: a SIGHUP re-reads the same files).
// [any thread; pure]
std::vector<std::string> restart_only_changes(const config& running, const config& fresh);

// The listeners with trees of their own (`listeners:`, a nutcracker.yml's
// pools) are bound once, and a client keeps the index of its listener's root
// (route/route_tree.h): a reload whose file adds, removes or reorders one is
// refused as a whole. "" when they are the same addresses in the same order;
// else what changed ("listener 127.0.0.1:22122 added"), for the refusal.
// Their backlog and client limit are restart-only (restart_only_changes:
// "listeners.backlog", "listeners.client_connections"). [any thread; pure]
std::string listener_changes(const config& running, const config& fresh);

}  // namespace ithaca::config
