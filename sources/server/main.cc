// ithaca: a memcached-compatible cache and proxy server.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli.h"
#include "config_dump.h"
#include "instance.h"
#include "log.h"
#include "machinarium.h"
#include "route_kind.h"
#include "process_setup.h"
#include "takeover_spawn.h"

#include <spdlog/spdlog.h>

int main(int argc, char** argv) {
  using namespace ithaca;
  server::takeover_remember_command(argc, argv);  // SIGUSR2 starts it again (takeover_spawn.h)
  // The route kinds' config side, before any config is read.
  route::register_route_kinds();
  config::cli_options cli;
  std::string error;
  if (!config::parse_args(argc, argv, cli, &error)) {
    // One line naming what is wrong (and -h), as memcached prints; the
    // help is there for who asks.
    std::fprintf(stderr, "ithaca: %s\n", error.c_str());
    return config::kUsageExit;
  }
  if (cli.help) {
    std::fputs(config::usage().c_str(), stdout);
    return 0;
  }
  if (cli.license) {
    std::fputs(config::license_text().c_str(), stdout);
    return 0;
  }
  if (cli.version) {
    std::printf("%s\n", config::version_string().c_str());
    return 0;
  }
  // memcached's SASL password file comes from the environment (-S).
  if (const char* pwdb = std::getenv("MEMCACHED_SASL_PWDB"); pwdb != nullptr) cli.sasl_pwdb = pwdb;
  if (cli.check_config) {
    std::string message;
    std::vector<std::string> warnings;
    int rc = config::check_config(cli, &message, &warnings);
    for (const std::string& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    std::fprintf(rc == 0 ? stdout : stderr, "%s\n", message.c_str());
    return rc;
  }
  config::config cfg;
  bool from_dump = false;
  if (!config::make_config(cli, cfg, &error)) {
    // mcrouter's --config-dump-root: the last config that loaded, when it
    // is young enough (config_dump.h).
    std::string dumped;
    std::string why;
    from_dump = cli.mcrouter_mode && config::read_dumped_config(cli, dumped, &why) &&
                config::make_config(cli, cfg, &why, true, &dumped);
    if (!from_dump) {
      std::fprintf(stderr, "ithaca: %s\n", error.c_str());
      if (!cli.config_dump_root.empty()) std::fprintf(stderr, "ithaca: no dumped config to use: %s\n", why.c_str());
      return 1;
    }
    cli.listen_warnings.push_back(error + "; serving the last valid config, dumped to " +
                                  config::dumped_config_path(cli));
  }
  if (std::string why; !from_dump && !config::dump_config(cli, cfg.source.text, &why)) {
    cli.listen_warnings.push_back("--config-dump-root: the config is not dumped: " + why);
  }
  // memcached's -r -u -d -k, before the first thread (fork and threads do
  // not mix): -d's parent does not come back from here.
  if (int rc = server::process_start(cfg, cli); rc >= 0) return rc;
  // Before the first thread (the logger's): a thread that leaves these
  // unblocked would take SIGHUP/SIGTERM with the default action and end the
  // process, instead of letting the pooler's signalfd receive them.
  mm::signal_block({SIGHUP, SIGTERM, SIGINT, SIGUSR1});
  mm::signal_block({SIGUSR2});  // a takeover by a new process (takeover_spawn.h)
  if (!log::init(cfg.logging, &error)) {
    std::fprintf(stderr, "ithaca: logging: %s\n", error.c_str());
    return 1;
  }
  log::install_machinarium_handler();
  for (const std::string& w : cli.listen_warnings) spdlog::warn("{}", w);
  server::process_log_start(cfg);
  int rc = server::instance_run(cfg, cli);
  rc = server::process_finish(rc);  // the pid file goes
  log::shutdown();
  return rc;
}
