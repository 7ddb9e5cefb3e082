// `stats settings`: the configuration as memcached reports it, one line per
// row of settings_table.h.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config.h"

namespace ithaca::config {

// What only the running server knows, where `stats settings` shows it over
// the config's figure (server/server_stats.cc fills it in).
struct settings_facts {
  uint16_t tcp_port = 0;        // the port bound (else the first configured one, 0 without one)
  std::string io_backend;       // the kernel interface chosen (the config may say auto)
  bool uring_running = false;   // the io_uring backend runs (proxy_uring_enabled)
  bool detail_enabled = false;  // `stats detail on|off`
  bool lru_crawler = false;     // `lru_crawler enable|disable`
  uint64_t slab_chunk_max = 0;  // of the class table it started with
};

// The facts as the config alone gives them (a server not yet running).
// [any thread; pure]
settings_facts configured_facts(const config& c);

// Name/value pairs in reply order (settings_table.h). [any thread; pure]
std::vector<std::pair<std::string, std::string>> settings_stats(const config& c, const settings_facts& f);
// The same with configured_facts(c): tcpport is the configured port.
std::vector<std::pair<std::string, std::string>> settings_stats(const config& c);

}  // namespace ithaca::config
