// A reload: re-read the configuration file and apply what can change live.
// One path for both triggers: SIGHUP and a watched file that changed
// (config_watch.h); both go through pooler::request_reload.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli.h"
#include "config.h"
#include "live_settings.h"
#include "machinarium.h"
#include "served_role.h"
#include "store.h"

namespace ithaca::proxy {
class server_directory;
}

namespace ithaca::server {

class tls_context;
class auth_store;

struct reload_target {
  const config::cli_options* cli = nullptr;  // the flags the server started with
  const config::config* started = nullptr;   // for the restart-only settings
  live_cell* live = nullptr;                 // this function is its only publisher
  store::store* store = nullptr;
  proxy::server_directory* servers = nullptr;  // the route trees' backend servers
  served_role* role = nullptr;                 // the access the tree is built for; its mutex orders the publishes
  // Reads of the file running on the blocking pool (one that timed out may
  // still be running there); while one is, a new reload is refused.
  std::shared_ptr<std::atomic<int>> reads_running = std::make_shared<std::atomic<int>>(0);
  // TLS on (-Z): a SIGHUP also re-reads the certificate files (tls_context.h).
  tls_context* tls = nullptr;
  // -Y / -S: a SIGHUP also re-reads the password files (auth_store.h).
  auth_store* auth = nullptr;
};

// What a reload that applied a file tells the config watcher: the files
// the new config was read from and whether to watch them.
struct reload_outcome {
  std::vector<std::string> sources;
  bool reload_on_change = false;
  int64_t read_at_ns = 0;  // config::config::read_at_ns
};

// How long a reload waits for the file to be read and parsed (on the
// blocking pool) before it gives up, keeping the running configuration.
inline constexpr mm::millis kReloadReadTimeout = 5000;

// Builds a new configuration as at start-up (defaults < file < the same
// command-line flags, so a flag still wins) and validates it. An error is
// logged as `file:line: message` and nothing changes; so is a router whose
// file names a spool directory other than the running one that cannot be
// used (config/spool_dir.h: looked at, not made). Otherwise: one warning
// names each restart-only setting that changed (they keep their running
// values), the live ones are applied (the store's limits, the log level, then
// the new live snapshot is published) and one info line lists each change as
// old -> new. The memory limit is compared with, and replaces, the store's
// current one, which `cache_memlimit` may have set: after a reload the file
// is what runs. Returns true if the file was applied.
// The file is read and parsed on the blocking pool (mm::blocking_call), so a
// slow or hung file system suspends only the calling coroutine, for at most
// kReloadReadTimeout; a FIFO, a device or a file over 1 MiB is refused
// without a read (config/config_file.h).
// Every log line starts with `trigger` ("SIGHUP", "config change"). When the
// file was applied, *applied (if given) gets its sources.
// [pooler machine, the "reload" coroutine; suspends]
bool reload_config(const reload_target& t, std::string_view trigger, reload_outcome* applied = nullptr);

// SIGHUP's other half, as memcached's: new handshakes get a context built
// from the certificate files again; a failure is logged (memcached's words)
// and the running certificates stay. [pooler machine; suspends]
void reload_certificates(const reload_target& t, std::string_view trigger);

}  // namespace ithaca::server
