// The library's log sink. Default: stderr. The server installs its own
// handler (spdlog) at start-up, before creating machines.
#include <atomic>
#include <cstdio>

#include "internal.h"

namespace mm {

namespace {
void stderr_handler(log_level level, std::string_view message) {
  static const char* const kNames[] = {"debug", "info", "warn", "error"};
  std::fprintf(stderr, "machinarium %s: %.*s\n", kNames[static_cast<int>(level)], static_cast<int>(message.size()),
               message.data());
}
std::atomic<log_handler> g_handler{stderr_handler};
}  // namespace

void set_log_handler(log_handler h) { g_handler.store(h ? h : stderr_handler); }

namespace detail {
void log(log_level level, std::string_view message) { g_handler.load()(level, message); }
}  // namespace detail

const char* to_string(wait_status s) {
  switch (s) {
    case wait_status::Ok: return "ok";
    case wait_status::TimedOut: return "timed out";
    case wait_status::Cancelled: return "cancelled";
  }
  return "?";
}

const char* to_string(backend_kind k) {
  switch (k) {
    case backend_kind::Auto: return "auto";
    case backend_kind::IoUring: return "io_uring";
    case backend_kind::Epoll: return "epoll";
  }
  return "?";
}

}  // namespace mm
