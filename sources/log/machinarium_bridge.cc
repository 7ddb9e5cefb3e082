// machinarium -> spdlog. In its own file so that linking log_lib pulls in
// machinarium only when install_machinarium_handler() is used.
#include <spdlog/spdlog.h>

#include "log.h"
#include "machinarium.h"

namespace ithaca::log {

namespace {

spdlog::level::level_enum to_spdlog(mm::log_level l) {
  switch (l) {
    case mm::log_level::Debug: return spdlog::level::debug;
    case mm::log_level::Info: return spdlog::level::info;
    case mm::log_level::Warn: return spdlog::level::warn;
    case mm::log_level::Error: return spdlog::level::err;
  }
  return spdlog::level::info;
}

// Runs on whichever machine thread logged; spdlog's default logger is safe to
// use from any thread.
void forward(mm::log_level l, std::string_view message) {
  spdlog::default_logger_raw()->log(to_spdlog(l), "machinarium: {}", message);
}

}  // namespace

void install_machinarium_handler() { mm::set_log_handler(&forward); }

}  // namespace ithaca::log
