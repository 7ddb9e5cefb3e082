#include "ready_notify.h"

#ifdef ITHACA_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include <unistd.h>

#include <cstring>
#include <string>

#include <spdlog/spdlog.h>

namespace ithaca::server {

namespace {
bool g_new_main_pid = false;  // written by the main thread before the pooler starts
}

void notify_as_new_main_pid() { g_new_main_pid = true; }

void notify_ready() {
#ifdef ITHACA_HAVE_SYSTEMD
  // A datagram on a local socket: it does not block.
  const std::string message =
      g_new_main_pid ? "READY=1\nMAINPID=" + std::to_string(::getpid()) : std::string("READY=1");
  const int rc = sd_notify(0, message.c_str());
  if (rc < 0) spdlog::warn("sd_notify READY=1: {}", std::strerror(-rc));
  // systemd reads the datagram before it sees the old process exit.
  if (rc > 0 && g_new_main_pid) {
    const int b = sd_notify_barrier(0, 5'000'000);
    if (b < 0) spdlog::warn("sd_notify_barrier: {}", std::strerror(-b));
  }
#endif
}

void notify_main_pid_again() {
#ifdef ITHACA_HAVE_SYSTEMD
  const std::string message = "READY=1\nMAINPID=" + std::to_string(::getpid());
  const int rc = sd_notify(0, message.c_str());
  if (rc < 0) spdlog::warn("sd_notify MAINPID: {}", std::strerror(-rc));
#endif
}

}  // namespace ithaca::server
