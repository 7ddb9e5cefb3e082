#include "process_setup.h"

#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "daemon.h"
#include "large_pages.h"
#include "pid_file.h"
#include "process_limits.h"
#include "ready_notify.h"
#include "run_as_user.h"

namespace ithaca::server {

namespace {

// Set by process_start before any thread exists; then read by the pooler
// thread (process_ready, which writes pid_written and failure_code) and by
// the main thread after joining it (process_finish): each hand-over is
// ordered by a thread start or join.
struct process_state {
  bool memcached_mode = false;
  bool root = false;
  bool switch_user = false;
  target_user user;
  std::string pid_file;  // absolute
  bool pid_written = false;
  std::string lock_warning;
  int failure_code = 0;
};
process_state state;

// memcached's words as memcached prints them in its own mode; prefixed with
// the program's name otherwise, as main's other errors are.
int refuse(int code, const std::string& message) {
  std::fprintf(stderr, "%s%s\n", state.memcached_mode ? "" : "ithaca: ", message.c_str());
  return code;
}

std::string absolute(const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

// memcached creates its unix sockets as the user it switched to already;
// ithaca binds first, so it hands them over before it switches.
void give_unix_sockets(const config::config& cfg, const target_user& u) {
  std::vector<std::string> paths = cfg.listen.unix_paths;
  for (const config::listener_route& l : cfg.router.listeners) {
    if (l.address.starts_with("unix:")) paths.push_back(l.address.substr(5));
  }
  for (const std::string& p : paths) {
    if (::chown(p.c_str(), u.uid, u.gid) != 0) {
      spdlog::warn("-u {}: cannot hand the unix socket {} over: {}", u.name, p, std::strerror(errno));
    }
  }
}

}  // namespace

int process_start(const config::config& cfg, config::cli_options& cli) {
  const config::process_config& p = cfg.process;
  state.memcached_mode = cli.memcached_mode;
  if (p.core_dumps && !raise_core_limit()) return refuse(EX_OSERR, "failed to ensure corefile creation");
  state.root = ::getuid() == 0 || ::geteuid() == 0;
  if (state.root && p.user.empty() && cli.memcached_mode) {
    return refuse(EX_USAGE, "must add '-u root' to start as root");
  }
  if (state.root && !p.user.empty()) {
    std::string why;
    if (!find_user(p.user, state.user, &why)) return refuse(EX_NOUSER, why);
    state.switch_user = true;
  }
  state.pid_file = absolute(p.pid_file);
  if (cli.daemonize) {
    cli.config_path = absolute(cli.config_path);
    std::string why;
    // memcached: no chdir with -r (a core lands in the directory it started
    // in), and its stdio kept with -v.
    if (!daemonize(p.core_dumps, cli.verbose > 0, &why)) {
      return refuse(EXIT_FAILURE, "failed to daemon() in order to daemonize (" + why + ")");
    }
  }
  if (p.lock_memory) state.lock_warning = lock_all_memory(state.switch_user && state.user.uid != 0);
  return -1;
}

void process_log_start(const config::config& cfg) {
  const config::process_config& p = cfg.process;
  if (state.root && p.user.empty()) {
    spdlog::warn(
        "running as root: -u USER (process.user) would switch to USER once the listeners are bound "
        "(memcached refuses to run as root without -u)");
  }
  if (!state.root && !p.user.empty()) {
    spdlog::info("-u {}: not started as root, so the user stays uid {}", p.user, ::getuid());
  }
  if (!state.lock_warning.empty()) spdlog::warn("{}", state.lock_warning);
  if (p.lock_memory && state.lock_warning.empty()) spdlog::info("-k: every page of the process is locked in memory");
  if (p.core_dumps) spdlog::info("-r: core dumps enabled (RLIMIT_CORE raised)");
  if (p.large_pages) {
    const large_pages_report r = report_large_pages();
    if (r.warn) {
      spdlog::warn("{}", r.line);
    } else {
      spdlog::info("{}", r.line);
    }
  }
}

bool process_ready(const config::config& cfg) {
  if (state.switch_user) {
    give_unix_sockets(cfg, state.user);
    std::string why;
    if (!switch_user(state.user, cfg.process.core_dumps, &why)) {
      spdlog::critical("{}", why);
      state.failure_code = EX_OSERR;
      return false;
    }
    spdlog::info("-u {}: running as uid {} gid {}", state.user.name, state.user.uid, state.user.gid);
  }
  // After the switch, as memcached writes it: the user who removes it at exit
  // writes it, and a root without CAP_DAC_OVERRIDE (Debian's memcached unit)
  // could not write into the user's /run/memcached anyway.
  if (!state.pid_file.empty()) state.pid_written = write_pid_file(state.pid_file);
  notify_ready();
  daemon_ready();
  return true;
}

// Ordered before process_finish by the pooler's join.
void process_handed_over() { state.pid_written = false; }

void process_resumed() {
  if (state.pid_written) state.pid_written = write_pid_file(state.pid_file);
  notify_main_pid_again();
}

int process_finish(int rc) {
  if (state.pid_written) remove_pid_file(state.pid_file);
  state.pid_written = false;
  return rc != 0 && state.failure_code != 0 ? state.failure_code : rc;
}

}  // namespace ithaca::server
