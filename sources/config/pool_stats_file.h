// mcrouter's --pool-stats-config-file: {"stats_enabled_pools": ["NAME", ...]},
// the pool-name prefixes that get a group of counters each
// (proxy/pool_group_stats.h). Read once at start: mcrouter reads it only
// when it starts, and a reload keeps the groups (their counters too).
// mcrouter logs a file it cannot use and runs without groups; ithaca refuses
// to start, so a typo is not a silent loss of the counters.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ithaca::config {

// The names in the file's order. False with `error` ("PATH: why", the line
// where the JSON says) if the file cannot be read, is not JSON, is not an
// object with "stats_enabled_pools" an array of distinct strings.
// [main thread, at start]
bool read_pool_stats_file(const std::string& path, std::vector<std::string>& names, std::string* error);

// The same from the file's text (what the tests feed).
bool parse_pool_stats(std::string_view text, std::vector<std::string>& names, std::string* error);

}  // namespace ithaca::config
