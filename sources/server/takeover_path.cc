#include "takeover_path.h"

#include <sys/stat.h>

#include <cstdlib>

namespace ithaca::server {

std::string takeover_socket_path(const config::config& cfg) {
  if (cfg.takeover.socket_set) return cfg.takeover.socket;
  // systemd's RuntimeDirectory= (the unit's /run/ithaca), else /run/ithaca
  // if it is there.
  std::string dir;
  if (const char* rd = std::getenv("RUNTIME_DIRECTORY"); rd != nullptr && *rd != '\0') {
    dir = rd;
    if (const auto colon = dir.find(':'); colon != std::string::npos) dir.resize(colon);  // several: the first
  } else {
    struct stat st {};
    if (::stat("/run/ithaca", &st) == 0 && S_ISDIR(st.st_mode)) dir = "/run/ithaca";
  }
  if (dir.empty() || cfg.listen.tcp.empty() || cfg.listen.tcp.front().port == 0) return {};
  return dir + "/ithaca-" + std::to_string(cfg.listen.tcp.front().port) + ".takeover";
}

}  // namespace ithaca::server
