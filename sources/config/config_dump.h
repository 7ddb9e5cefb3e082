// mcrouter's --config-dump-root (ConfigApi): the last config that loaded is
// kept on disk, and a start whose config does not load takes that copy
// instead when it is younger than --max-dumped-config-age seconds (default
// 12 hours; 0: never). The copy of the config file PATH is
//   ROOT/mcrouter/ROUTER/file-ESCAPED
// ROUTER the first -p port ("0" without one: mcrouter's router name),
// ESCAPED the path with every byte but [A-Za-z0-9-_.~] as %XX (folly's
// uriEscape). Only the file itself is kept (what it imports is not).
// A copy is written after a start or a reload that applied the config, never
// for a config that came from the copy. [main thread at start; the blocking
// pool at reload: file I/O]
#pragma once

#include <string>

#include "cli.h"
#include "config.h"

namespace ithaca::config {

// mcrouter's router name: the first -p port, "0" without one (its files
// under --config-dump-root and --stats-root are named by it).
std::string mcrouter_router_name(const cli_options& cli);

// Where the copy of cli.config_path goes; "" without --config-dump-root or a
// config file.
std::string dumped_config_path(const cli_options& cli);

// Writes the config file's text (config::source.text, as read) to its copy.
// True when there is nothing to do; false and *error when the write failed.
bool dump_config(const cli_options& cli, const std::string& text, std::string* error);

// The copy's text, if it exists and is younger than the age limit; false and
// *why (missing, too old, unreadable) otherwise.
bool read_dumped_config(const cli_options& cli, std::string& text, std::string* why);

}  // namespace ithaca::config
