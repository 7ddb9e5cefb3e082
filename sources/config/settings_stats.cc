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

// memcached prints its -l arguments as given (comma-joined), or NULL without
// one: every interface ("*", the default). Listeners from the file: the tcp
// hosts, with ":port" where it differs from tcpport.
std::string interfaces(const listen_config& l) {
  if (!l.inter.empty()) return l.inter;
  if (l.tcp.empty() || (l.tcp.size() == 1 && l.tcp.front().host == "*")) return "NULL";
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

// memcached prints OpenSSL's verify flags for its 0..3: NONE, PEER,
// PEER|FAIL_IF_NO_PEER_CERT, and that |CLIENT_ONCE.
unsigned openssl_verify_flags(unsigned mode) {
  static constexpr unsigned kFlags[] = {0, 1, 3, 7};
  return mode <= kVerifyModeMax ? kFlags[mode] : 0;
}

// memcached's "%s" of an unset path (glibc prints a null string so).
std::string or_null(const std::string& s, const char* unset) { return s.empty() ? unset : s; }

// memcached's binding_protocol line: -S binds the binary protocol, -Y the
// ascii one (memcached.c), else -B's, whose Negotiating it calls
// "auto-negotiate" (-B's own word is "auto").
const char* binding_name(const config& c) {
  if (c.server.sasl) return "binary";
  if (!c.server.auth_file.empty()) return "ascii";
  if (c.server.binding == kinds::binding_protocol::Negotiating) return "auto-negotiate";
  return to_string(c.server.binding);
}

}  // namespace

// `stats settings`: memcached's names and formats in memcached's order, then
// ithaca's own settings; built from one config snapshot. [any thread]
std::vector<std::pair<std::string, std::string>> settings_stats(const config& c) {
  const listen_config& l = c.listen;
  auto n = [](uint64_t v) { return std::to_string(v); };
  auto yes_no = [](bool b) { return std::string(b ? "yes" : "no"); };
  const bool router = !c.router.pools.empty();
  return {
      // memcached 1.6.45's, in its order (extstore's omitted, as a memcached
      // built without it does). Where ithaca has the setting, its value; where
      // the mechanism does not exist here (slab page mover, segmented LRU,
      // crawler, SASL), what memcached prints with it switched off, else its
      // default. `oldest` and `detail_enabled` are live: the stats command
      // fills them in.
      {"maxbytes", n(c.cache.memory_limit)},
      {"maxconns", n(c.server.max_connections)},
      {"tcpport", n(l.tcp.empty() ? 0 : l.tcp.front().port)},
      {"udpport", n(l.udp_port)},
      {"inter", interfaces(l)},
      {"verbosity", n(static_cast<uint64_t>(verbosity(c.logging.level)))},
      {"oldest", "0"},
      {"evictions", c.cache.evictions ? "on" : "off"},
      {"domain_socket", l.unix_paths.empty() ? "NULL" : l.unix_paths.front()},
      {"umask", octal(l.unix_mode)},
      {"shutdown_command", yes_no(c.server.enable_shutdown)},
      // The size-class table ithaca reports its items in (stats slabs).
      {"growth_factor", fixed2(c.cache.slab_growth_factor)},
      {"chunk_size", n(c.cache.slab_min_size)},
      {"num_threads", n(c.server.workers)},
      {"num_threads_per_udp", n(c.server.workers)},
      {"stat_key_prefix", std::string(1, c.server.prefix_delimiter)},
      {"detail_enabled", yes_no(c.server.detail_enabled)},
      {"reqs_per_event", n(c.server.reqs_per_event)},
      {"cas_enabled", yes_no(c.cache.cas_enabled)},
      {"tcp_backlog", n(l.backlog)},
      {"binding_protocol", binding_name(c)},
      {"auth_enabled_sasl", yes_no(c.server.sasl)},
      {"auth_enabled_ascii", c.server.auth_file.empty() ? "no" : c.server.auth_file},
      {"item_size_max", n(c.cache.item_size_max)},
      {"maxconns_fast", "yes"},  // over -c a connection is refused at once
      {"hashpower_init", n(c.cache.hash_power)},
      {"slab_reassign", "yes"},  // slabs reassign answers OK (one shared pool: nothing to move)
      {"slab_automove", "0"},
      {"slab_automove_ratio", "0.80"},
      {"slab_automove_window", "10"},
      {"slab_chunk_max", n(slab_chunk_max(c.cache))},
      // metadump / mgdump; crawl's work is the GC sweep's. Live: `lru_crawler
      // enable|disable` switch it (server_stats fills it in).
      {"lru_crawler", yes_no(c.cache.lru_crawler)},
      {"lru_crawler_sleep", "100"},
      {"lru_crawler_tocrawl", "0"},
      {"tail_repair_time", "0"},
      {"flush_enabled", yes_no(c.server.enable_flush_all)},
      {"dump_enabled", yes_no(c.server.enable_dumping)},
      {"hash_algorithm", "ithaca-seeded"},  // a per-start seeded 64-bit hash (store/hash.h)
      {"lru_maintainer_thread", "no"},
      {"lru_segmented", "no"},  // one CLOCK per store, no hot/warm/cold
      {"hot_lru_pct", "20"},
      {"warm_lru_pct", "40"},
      {"hot_max_factor", "0.20"},
      {"warm_max_factor", "2.00"},
      {"temp_lru", "no"},
      {"temporary_ttl", "61"},
      // memcached counts idle_timeout in seconds; round up so 1ms is not "off".
      {"idle_timeout", n((c.server.idle_timeout_ms + 999) / 1000)},
      {"watcher_logbuf_size", "262144"},
      {"worker_logbuf_size", "65536"},
      {"read_buf_mem_limit", "0"},
      {"track_sizes", "no"},
      {"inline_ascii_response", "no"},
      // As a memcached built with TLS prints them, on or off.
      {"ssl_enabled", yes_no(c.tls.enabled)},
      {"ssl_chain_cert", or_null(c.tls.chain_cert, "(null)")},
      {"ssl_key", or_null(c.tls.key, "(null)")},
      {"ssl_verify_mode", n(openssl_verify_flags(c.tls.verify_mode))},
      {"ssl_keyformat", n(static_cast<uint64_t>(c.tls.keyformat))},
      {"ssl_ciphers", or_null(c.tls.ciphers, "NULL")},
      {"ssl_ca_cert", or_null(c.tls.ca_cert, "NULL")},
      {"ssl_wbuf_size", n(c.tls.wbuf_size)},
      {"ssl_session_cache", yes_no(c.tls.session_cache)},
      {"ssl_kernel_tls", yes_no(c.tls.kernel_tls)},
      {"ssl_min_version", min_version_text(c.tls.min_version)},
      {"proxy_enabled", yes_no(router)},  // the router role is the proxy
      {"proxy_uring_enabled", yes_no(router && c.server.backend != io_backend::Epoll)},
      {"num_napi_ids", "0"},
      {"memory_file", "(null)"},
      {"client_flags_size", "4"},
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
      // memcached's -P -u -r -k -L, which its stats settings do not show (`process:`)
      {"pid_file", or_null(c.process.pid_file, "NULL")},
      {"user", or_null(c.process.user, "NULL")},
      {"core_dumps", yes_no(c.process.core_dumps)},
      {"lock_memory", yes_no(c.process.lock_memory)},
      {"large_pages", yes_no(c.process.large_pages)},
  };
}

}  // namespace ithaca::config
