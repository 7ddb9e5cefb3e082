// The `logging` section of the config. It lives here, not in sources/config,
// because the log library is built first; config.h re-exports it.
#pragma once

#include <string>

namespace ithaca::log {

enum class log_level { Trace, Debug, Info, Warn, Error, Off };

struct logging_config {
  log_level level = log_level::Warn;  // like memcached without -v: problems only
  std::string file;                   // "" = stderr
  unsigned async_queue = 1024;        // lines; when full the oldest line is dropped (408 B each)
};

}  // namespace ithaca::log
