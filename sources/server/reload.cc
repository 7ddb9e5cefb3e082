#include "reload.h"

#include <algorithm>
#include <ctime>

#include <spdlog/spdlog.h>

#include "config_dump.h"
#include "log.h"
#include "restart_only.h"
#include "service_info_of.h"
#include "spool_dir.h"
#include "tls_context.h"
#include "route_builder.h"

namespace ithaca::server {

namespace {
std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}
// Sets the store's live limits from `l`. (At start-up the store is built
// with them.)
void apply_to_store(const live_settings& l, store::store& st) {
  if (!st.set_memory_limit(l.memory_limit))
    spdlog::warn("cache.memory_limit {} not applied: past the item region's reservation (restart to raise it)",
                 l.memory_limit);
  st.set_item_size_max(l.item_size_max);
  st.set_large_value_threshold(l.large_value_threshold);
  st.set_large_value_disk_limit(l.large_value_disk_limit);
  st.set_lease_interval_ms(l.lease_interval_ms);
  st.set_evictions(l.evictions);
}

// router.spool_dir is restart-only (the running spool keeps its directory),
// but a file that names an unusable one is refused as a whole rather than
// accepted with a warning: the restart it asks for would fail (instance.cc).
// Only a directory other than the running one is looked at (nothing is
// made): the running one was made and proved at start. [the blocking pool]
bool spool_dir_usable(const config::config& fresh, const std::string& running_dir, const std::string& path,
                      std::string* error) {
  if (!config::uses_spool(fresh)) return true;
  const std::string dir = config::spool_dir_of(fresh);
  if (dir == running_dir) return true;
  const std::string problem = config::spool_dir_problem(dir);
  if (problem.empty()) return true;
  *error = path + ": router.spool_dir: " + problem + " (reliable deletes' spool)";
  return false;
}

// Builds the new config (read, parse, validate) on the blocking pool: a
// read that hangs (a stuck network file system) must not stop the pooler
// accepting. The pool thread may outlive a timed-out wait, so it owns what
// it touches (a copy of the flags, the shared result).
bool read_and_validate(const reload_target& t, config::config& out, std::string* error) {
  const std::string& path = t.cli->config_path;
  if (t.reads_running->load() > 0) {
    *error = path + ": the previous reload's read of it has not returned (a hung file system?)";
    return false;
  }
  struct result {
    config::config cfg;
    std::string error;
    bool ok = false;
  };
  auto r = std::make_shared<result>();
  auto running = t.reads_running;
  mm::wait_status w = mm::blocking_call(
      [r, running, cli = *t.cli, spool_dir = config::spool_dir_of(*t.started)] {
        running->fetch_add(1);
        r->ok = config::make_config(cli, r->cfg, &r->error, /*allow_empty_file=*/false);
        if (r->ok) r->ok = spool_dir_usable(r->cfg, spool_dir, cli.config_path, &r->error);
        running->fetch_sub(1);
      },
      kReloadReadTimeout);
  if (w == mm::wait_status::Cancelled) {
    *error = path + ": shutting down";
    return false;
  }
  if (w != mm::wait_status::Ok) {
    *error = path + ": not read within " + std::to_string(kReloadReadTimeout / 1000) +
             " s (a hung file system, or the blocking pool is full)";
    return false;
  }
  if (!r->ok) {
    *error = r->error;
    return false;
  }
  out = std::move(r->cfg);
  return true;
}
// mcrouter's --config-dump-root: the config just applied is the one to
// fall back on (config_dump.h), written on the blocking pool (file I/O).
void dump_applied_config(const config::cli_options& cli, const std::string& text) {
  if (cli.config_dump_root.empty()) return;
  auto why = std::make_shared<std::string>();
  const mm::wait_status w = mm::blocking_call(
      [why, cli, text] {
        if (!config::dump_config(cli, text, why.get()) && why->empty()) *why = "not written";
      },
      kReloadReadTimeout);
  if (w != mm::wait_status::Ok) {
    spdlog::warn("--config-dump-root: the applied config was not dumped within {} s", kReloadReadTimeout / 1000);
  } else if (!why->empty()) {
    spdlog::warn("--config-dump-root: the applied config is not dumped: {}", *why);
  }
}

}  // namespace

bool reload_config(const reload_target& t, std::string_view trigger, reload_outcome* applied) {
  const std::string& path = t.cli->config_path;
  if (path.empty()) {
    spdlog::info("{}: no configuration file to reload", trigger);
    return false;
  }
  config::config fresh;
  std::string error;
  if (!read_and_validate(t, fresh, &error)) {
    spdlog::error("{}: reload refused, keeping the running configuration: {}", trigger, error);
    return false;
  }
  // A listener with a tree of its own is bound once (restart_only.h).
  if (std::string changed = config::listener_changes(*t.started, fresh); !changed.empty()) {
    spdlog::error(
        "{}: reload refused, keeping the running configuration: {}: {}; adding, removing or "
        "reordering a listener needs a restart",
        trigger, path, changed);
    return false;
  }
  if (auto restart = config::restart_only_changes(*t.started, fresh); !restart.empty()) {
    spdlog::warn("{}: {} changed; needs a restart (the running value stays until then)", trigger, join(restart));
  }
  // From the role's access to the publish: a role change waits (served_role.h).
  std::unique_lock role_lock(t.role->publish_mutex());
  const route::store_access access = t.role->access();
  // A new route tree: servers still in the file keep their connections.
  auto routes = route::build_route_tree(fresh, *t.servers, access, &error);
  if (!routes) {
    spdlog::error("{}: reload refused, keeping the running configuration: {}: {}", trigger, path, error);
    return false;
  }
  live_settings before = *t.live->load();
  before.memory_limit = t.store->memory_limit();
  live_settings next = live_settings_of(fresh);
  next.routes = routes;
  next.close_clients = access == route::store_access::Closed;
  next.config_file = path;
  next.config_loaded_at = static_cast<int64_t>(std::time(nullptr));
  next.info = service_info_of(fresh, path);
  auto after = std::make_shared<const live_settings>(std::move(next));
  // The store first: a client that sees the new snapshot (its parser's
  // item_size_max) finds the store's limits already moved.
  apply_to_store(*after, *t.store);
  t.live->publish(after);
  role_lock.unlock();
  // Servers the new tree does not name: their connections close once the
  // requests on them (of batches still on the old tree) are answered.
  t.servers->retire_all_but(routes->servers());
  std::vector<std::string> changes = live_changes(before, *after);
  // The line saying what changed is logged at info under the more verbose of
  // the old and the new level, so a file that raises the level to warn still
  // leaves a trace of that change; then the new level holds.
  log::set_level(std::min(before.log_level, after->log_level));
  spdlog::info("{}: {} is valid; applied: {}", trigger, path,
               changes.empty() ? "no live setting changed" : join(changes));
  log::set_level(after->log_level);
  dump_applied_config(*t.cli, fresh.source.text);
  if (applied) {
    applied->sources = std::move(fresh.sources);
    applied->reload_on_change = fresh.server.reload_on_change;
    applied->read_at_ns = fresh.read_at_ns;
  }
  return true;
}

void reload_certificates(const reload_target& t, std::string_view trigger) {
  if (!t.tls) return;
  std::string error;
  if (t.tls->refresh_from_coroutine(&error, kReloadReadTimeout)) {
    spdlog::info("{}: TLS certificates reloaded", trigger);
  } else {
    spdlog::error("Could not reload TLS certificates on {}: {}", trigger, error);
  }
}

}  // namespace ithaca::server
