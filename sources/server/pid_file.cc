#include "pid_file.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <spdlog/spdlog.h>

namespace ithaca::server {

bool write_pid_file(const std::string& path) {
  // memcached's warning, and then it writes over it anyway.
  if (std::ifstream old(path); old) {
    long pid = 0;
    if (old >> pid && pid > 0 && ::kill(static_cast<pid_t>(pid), 0) == 0) {
      spdlog::warn("WARNING: The pid file contained the following (running) pid: {}", pid);
    }
  }
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    spdlog::error("Could not open the pid file {} for writing: {}", tmp, std::strerror(errno));
    return false;
  }
  std::fprintf(f, "%ld\n", static_cast<long>(::getpid()));
  if (std::fclose(f) != 0) {
    spdlog::error("Could not close the pid file {}: {}", tmp, std::strerror(errno));
    ::unlink(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    spdlog::error("Could not rename the pid file from {} to {}: {}", tmp, path, std::strerror(errno));
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

void remove_pid_file(const std::string& path) {
  if (::unlink(path.c_str()) != 0) spdlog::error("Could not remove the pid file {}: {}", path, std::strerror(errno));
}

}  // namespace ithaca::server
