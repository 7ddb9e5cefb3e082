// SIGHUP: re-read the configuration file and apply what can change live.
#pragma once

#include "cli.h"
#include "config.h"
#include "live_settings.h"
#include "served_role.h"
#include "store.h"

namespace ithaca::proxy {
class server_directory;
}

namespace ithaca::server {

struct reload_target {
  const config::cli_options* cli = nullptr;  // the flags the server started with
  const config::config* started = nullptr;   // for the restart-only settings
  live_cell* live = nullptr;                 // this function is its only publisher
  store::store* store = nullptr;
  proxy::server_directory* servers = nullptr;  // the route trees' backend servers
  served_role* role = nullptr;  // the access the tree is built for; its mutex orders the publishes
};

// Builds a new configuration as at start-up (defaults < file < the same
// command-line flags, so a flag still wins) and validates it. An error is
// logged as `file:line: message` and nothing changes. Otherwise: one warning
// names each restart-only setting that changed (they keep their running
// values), the live ones are applied (the store's limits, the log level, then
// the new live snapshot is published) and one info line lists each change as
// old -> new. The memory limit is compared with, and replaces, the store's
// current one, which `cache_memlimit` may have set: after a reload the file
// is what runs. Returns true if the file was applied.
// [pooler machine; reads the small config file synchronously]
bool reload_config(const reload_target& t);

}  // namespace ithaca::server
