#include "takeover_spawn.h"

#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>

extern char** environ;

namespace ithaca::server {

namespace {
// Written once by main before any thread, read by the signals coroutine.
std::string g_binary;
std::vector<std::string> g_args;
}  // namespace

void takeover_remember_command(int argc, char** argv) {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n > 0) g_binary.assign(path, static_cast<size_t>(n));
  // Replaced by an upgrade: the path names the new file.
  constexpr std::string_view kDeleted = " (deleted)";
  if (g_binary.ends_with(kDeleted)) g_binary.resize(g_binary.size() - kDeleted.size());
  if (g_binary.empty() && argc > 0) g_binary = argv[0];
  g_args.assign(argv, argv + argc);
}

pid_t takeover_spawn() {
  // The same arguments, argv[0] included, so the new process reads them as
  // this one did: ithaca's flags, memcached's (argv[0] "memcached" or
  // --memcached) or mcrouter's (--mcrouter); each accepts --takeover.
  std::vector<std::string> args = g_args;
  bool has_flag = false;
  for (const std::string& a : args) has_flag = has_flag || a == "--takeover";
  if (!has_flag) args.push_back("--takeover");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, g_binary.c_str(), nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    spdlog::error("SIGUSR2: cannot start {}: {}; still serving", g_binary, std::strerror(rc));
    return -1;
  }
  spdlog::warn("SIGUSR2: started {} --takeover (pid {}) to take this process's place", g_binary, pid);
  return pid;
}

}  // namespace ithaca::server
