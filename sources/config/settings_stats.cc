#include "settings_stats.h"

#include <cstdio>

namespace ithaca::config {

namespace {

// memcached's -v count.
int verbosity(log_level l) {
  switch (l) {
    case log_level::Trace: return 3;
    case log_level::Debug: return 2;
    case log_level::Info: return 1;
    case log_level::Warn:
    case log_level::Error:
    case log_level::Off: return 0;
  }
  return 0;
}

// memcached prints its -l argument, or NULL without one. We print the tcp
// hosts, with ":port" where it differs from tcpport.
std::string interfaces(const listen_config& l) {
  if (l.tcp.empty()) return "NULL";
  std::string out;
  for (const tcp_address& a : l.tcp) {
    if (!out.empty()) out += ',';
    if (a.port != l.tcp.front().port) {
      out += to_string(a);
    } else {
      out += a.host.find(':') != std::string::npos ? "[" + a.host + "]" : a.host;
    }
  }
  return out;
}

// memcached prints its -a mask with "%o": "700", "0" for 0.
std::string octal(unsigned mode) {
  std::string out;
  do {
    out.insert(out.begin(), static_cast<char>('0' + (mode & 7)));
    mode >>= 3;
  } while (mode != 0);
  return out;
}

// memcached prints its factor with "%.2f".
std::string fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> settings_stats(const config& c) {
  const listen_config& l = c.listen;
  auto n = [](uint64_t v) { return std::to_string(v); };
  auto yes_no = [](bool b) { return std::string(b ? "yes" : "no"); };
  return {
      // memcached's
      {"maxbytes", n(c.cache.memory_limit)},
      {"maxconns", n(c.server.max_connections)},
      {"tcpport", n(l.tcp.empty() ? 0 : l.tcp.front().port)},
      {"udpport", n(l.udp_port)},
      {"inter", interfaces(l)},
      {"verbosity", n(static_cast<uint64_t>(verbosity(c.logging.level)))},
      {"evictions", "on"},
      {"domain_socket", l.unix_paths.empty() ? "NULL" : l.unix_paths.front()},
      {"umask", octal(l.unix_mode)},
      {"shutdown_command", yes_no(c.server.enable_shutdown)},
      {"growth_factor", fixed2(c.cache.slab_growth_factor)},
      {"chunk_size", n(c.cache.slab_min_size)},
      {"num_threads", n(c.server.workers)},
      {"cas_enabled", "yes"},
      {"tcp_backlog", n(l.backlog)},
      {"binding_protocol", "auto-negotiate"},
      {"item_size_max", n(c.cache.item_size_max)},
      {"slab_chunk_max", n(slab_chunk_max(c.cache))},
      // memcached counts idle_timeout in seconds; round up so 1ms is not "off".
      {"idle_timeout", n((c.server.idle_timeout_ms + 999) / 1000)},
      // ithaca's
      {"io_backend", to_string(c.server.backend)},
      {"hash_power", n(c.cache.hash_power)},
      {"gc_interval_ms", n(c.cache.gc_interval_ms)},
      {"large_value_threshold", n(c.cache.large_value_threshold)},
      {"large_value_disk_limit", n(c.cache.large_value_disk_limit)},
      {"large_value_dir", c.cache.large_value_dir},
      {"lease_interval_ms", n(c.cache.lease_interval_ms)},
      {"idle_timeout_ms", n(c.server.idle_timeout_ms)},
      {"stack_size", n(c.server.stack_size)},
      {"read_buffer_size", n(c.server.read_buffer_size)},
      {"log_level", to_string(c.logging.level)},
      {"log_async_queue", n(c.logging.async_queue)},
  };
}

}  // namespace ithaca::config
