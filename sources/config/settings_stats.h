// `stats settings`: the configuration as memcached reports it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config.h"

namespace ithaca::config {

// Name/value pairs in reply order. memcached's names and value formats where
// the concept exists (checked against memcached 1.6.18), then ithaca's own.
// tcpport is the configured port: a server that bound port 0 should replace it
// with the port it got. [any thread; pure]
std::vector<std::pair<std::string, std::string>> settings_stats(const config& c);

}  // namespace ithaca::config
