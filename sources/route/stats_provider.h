// Server-wide statistics for the `stats` commands, implemented by the server
// (server_stats.cc) and asked by whichever route answers `stats`: the local
// executor in the cache role, the router's own answer in the router role.
// Called from a worker coroutine; implementations only read counters.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ithaca::route {

using stat_lines = std::vector<std::pair<std::string, std::string>>;

class stats_provider {
 public:
  virtual ~stats_provider() = default;
  // Fills `out` for `stats <arg>` ("" = general stats, "settings", "items",
  // "slabs", "conns", "pools", "servers", ...). False if `arg` is not a group.
  virtual bool collect(std::string_view arg, stat_lines& out) = 0;
  virtual void reset() = 0;  // `stats reset`
  virtual void set_verbosity(uint32_t level) = 0;
};

}  // namespace ithaca::route
