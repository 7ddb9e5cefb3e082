#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "listen_prefix.h"

namespace ithaca::config {

bool parse_tcp_address(std::string_view text, uint16_t default_port, tcp_address& out, std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error) *error = "bad address '" + std::string(text) + "': " + why;
    return false;
  };
  std::string_view host = text;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return fail("missing ']'");
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return fail("expected ':' after ']'");
      port = rest.substr(1);
      if (port.empty()) return fail("empty port");
    }
  } else {
    size_t colon = text.rfind(':');
    if (colon != std::string_view::npos) {
      // More than one ':' and no brackets: a bare IPv6 address, no port.
      if (text.find(':') != colon) {
        host = text;
      } else {
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
        if (port.empty()) return fail("empty port");
      }
    }
  }
  if (host.empty()) return fail("empty host");
  uint16_t p = default_port;
  if (!port.empty()) {
    uint64_t v = 0;
    if (!parse_unsigned(port, v) || !kPortRange.contains(v)) {
      return fail("port must be an integer from 0 to 65535");
    }
    p = static_cast<uint16_t>(v);
  }
  out.host = std::string(host);
  out.port = p;
  return true;
}

bool parse_listen_address(std::string_view text, uint16_t default_port, tcp_address& out, std::string* error,
                          std::string* warning) {
  listen_prefix p;
  if (!parse_listen_prefix(text, p, error, warning)) return false;
  if (!parse_tcp_address(text.substr(p.length), default_port, out, error)) return false;
  out.notls = p.notls;
  out.peer = p.peer;
  out.protocol = p.protocol;
  out.tag = std::move(p.tag);
  return true;
}

size_t listen_prefix_length(std::string_view text) {
  listen_prefix p;
  return parse_listen_prefix(text, p, nullptr) ? p.length : 0;
}

std::string to_string(const tcp_address& a) {
  bool v6 = a.host.find(':') != std::string::npos;
  return (v6 ? "[" + a.host + "]" : a.host) + ":" + std::to_string(a.port);
}

const char* to_string(io_backend b) {
  switch (b) {
    case io_backend::Auto: return "auto";
    case io_backend::IoUring: return "io_uring";
    case io_backend::Epoll: return "epoll";
  }
  return "?";
}

const char* to_string(log_level l) {
  switch (l) {
    case log_level::Trace: return "trace";
    case log_level::Debug: return "debug";
    case log_level::Info: return "info";
    case log_level::Warn: return "warn";
    case log_level::Error: return "error";
    case log_level::Off: return "off";
  }
  return "?";
}

bool parse_log_level(std::string_view text, log_level& out) {
  for (log_level l :
       {log_level::Trace, log_level::Debug, log_level::Info, log_level::Warn, log_level::Error, log_level::Off}) {
    if (text == to_string(l)) {
      out = l;
      return true;
    }
  }
  if (text == "warning") {
    out = log_level::Warn;
    return true;
  }
  return false;
}

std::string cache_config::default_large_value_dir() {
  const char* tmp = std::getenv("TMPDIR");
  if (tmp != nullptr && tmp[0] == '/') return tmp;
  return "/tmp";
}

namespace {

// One rule at a time; the first failure wins.
class checker {
 public:
  explicit checker(validation_error* error) : error_(error) {}

  bool in_range(const char* key, const char* name, value_kind kind, uint64_t v, range r) {
    if (r.contains(v)) return true;
    return fail({key}, std::string(name) + ": expected " + describe(kind, r) + ", got " + format_value(kind, v));
  }

  bool fail(std::vector<std::string> keys, std::string message) {
    if (error_) *error_ = validation_error{std::move(keys), std::move(message)};
    return false;
  }

 private:
  validation_error* error_;
};

// The listeners with trees of their own (`listeners:`, a nutcracker.yml's
// pools): each address once, and none also under `listen:` (port 0 binds a
// fresh port each time, so it may repeat).
bool validate_listeners(const config& cfg, checker& c) {
  std::vector<std::string> seen;
  for (const tcp_address& a : cfg.listen.tcp) seen.push_back(to_string(a));
  for (const std::string& p : cfg.listen.unix_paths) seen.push_back("unix:" + p);
  for (const listener_route& l : cfg.router.listeners) {
    if (l.address.starts_with("unix:") && l.address.size() - 5 > kMaxUnixPath) {
      return c.fail({"listeners"}, "listeners: path '" + l.address.substr(5) + "' is longer than " +
                                       std::to_string(kMaxUnixPath) + " bytes");
    }
    if (!l.address.ends_with(":0") && std::find(seen.begin(), seen.end(), l.address) != seen.end()) {
      return c.fail({"listeners"},
                    "listeners: " + l.address + " is listened on twice (each listener has one address of its own)");
    }
    seen.push_back(l.address);
  }
  return true;
}

bool validate_listen(const listen_config& l, bool has_listeners, checker& c) {
  if (l.tcp.empty() && l.unix_paths.empty() && l.inherited_fds.empty() && !has_listeners) {
    return c.fail({"listen.tcp", "listen.unix", "listen"}, "listen: no listeners (set listen.tcp or listen.unix)");
  }
  for (const tcp_address& a : l.tcp) {
    if (a.host.empty()) return c.fail({"listen.tcp"}, "tcp: empty host");
  }
  for (const std::string& p : l.unix_paths) {
    if (p.empty()) return c.fail({"listen.unix"}, "unix: empty path");
    if (p.size() > kMaxUnixPath) {
      return c.fail({"listen.unix"},
                    "unix: path '" + p + "' is longer than " + std::to_string(kMaxUnixPath) + " bytes");
    }
  }
  if (l.unix_mode > 0777) {
    return c.fail({"listen.unix_mode"}, "unix_mode: expected an octal mode from 0 to 777");
  }
  if (l.udp_port != 0 && l.tcp.empty()) {
    return c.fail({"listen.udp", "listen.tcp"}, "udp: needs a tcp host to bind to (udp uses the tcp hosts)");
  }
  return c.in_range("listen.backlog", "backlog", value_kind::Integer, l.backlog, kBacklogRange);
}

bool validate_server(const server_config& s, checker& c) {
  return c.in_range("server.workers", "workers", value_kind::Integer, s.workers, kWorkersRange) &&
         c.in_range("server.max_connections", "max_connections", value_kind::Integer, s.max_connections,
                    kMaxConnectionsRange) &&
         c.in_range("server.idle_timeout", "idle_timeout", value_kind::Duration, s.idle_timeout_ms,
                    kIdleTimeoutRange) &&
         c.in_range("server.stack_size", "stack_size", value_kind::Size, s.stack_size, kStackSizeRange) &&
         c.in_range("server.read_buffer_size", "read_buffer_size", value_kind::Size, s.read_buffer_size,
                    kReadBufferRange);
}

// -S / -Y beside UDP (memcached's refusals) or beside each other; and SASL
// needs its password file named (memcached would fall back to Cyrus SASL's
// own configuration, which ithaca does not read).
bool validate_auth(const config& cfg, checker& c) {
  const server_config& s = cfg.server;
  std::string why = auth_flag_conflict(s.sasl, !s.auth_file.empty(), cfg.listen.udp_port);
  if (!why.empty()) return c.fail({"server.sasl", "server.auth_file", "listen.udp"}, why);
  // -S binds the binary protocol and -Y the ascii one: a -B that says the
  // other is memcached's refusal (an unset -B follows them).
  if (s.sasl && s.binding == kinds::binding_protocol::Ascii) {
    return c.fail({"server.binding_protocol", "server.sasl"}, kSaslBindingConflict);
  }
  if (!s.auth_file.empty() && s.binding == kinds::binding_protocol::Binary) {
    return c.fail({"server.binding_protocol", "server.auth_file"}, kAsciiAuthBindingConflict);
  }
  if (s.sasl && s.sasl_pwdb.empty()) {
    return c.fail({"server.sasl", "server.sasl_pwdb"},
                  "sasl (-S): no password file: name it in server.sasl_pwdb or in the environment's "
                  "MEMCACHED_SASL_PWDB (user:password lines)");
  }
  return true;
}

bool validate_cache(const cache_config& k, checker& c) {
  if (!c.in_range("cache.memory_limit", "memory_limit", value_kind::Size, k.memory_limit, kMemoryLimitRange) ||
      !c.in_range("cache.item_size_max", "item_size_max", value_kind::Size, k.item_size_max, kItemSizeMaxRange) ||
      !c.in_range("cache.large_value_threshold", "large_value_threshold", value_kind::Size, k.large_value_threshold,
                  kLargeValueThresholdRange) ||
      !c.in_range("cache.large_value_disk_limit", "large_value_disk_limit", value_kind::Size, k.large_value_disk_limit,
                  kLargeValueDiskLimitRange) ||
      !c.in_range("cache.hash_power", "hash_power", value_kind::Integer, k.hash_power, kHashPowerRange) ||
      !c.in_range("cache.gc_interval", "gc_interval", value_kind::Duration, k.gc_interval_ms, kGcIntervalRange) ||
      !c.in_range("cache.lease_interval", "lease_interval", value_kind::Duration, k.lease_interval_ms,
                  kLeaseIntervalRange)) {
    return false;
  }
  // memcached refuses the same: an item must fit twice in memory.
  if (k.item_size_max > k.memory_limit / 2) {
    return c.fail({"cache.item_size_max", "cache.memory_limit"}, "item_size_max (" + format_size(k.item_size_max) +
                                                                     ") must not exceed half of memory_limit (" +
                                                                     format_size(k.memory_limit) + ")");
  }
  if (k.large_value_threshold > k.item_size_max) {
    return c.fail({"cache.large_value_threshold", "cache.item_size_max"},
                  "large_value_threshold (" + format_size(k.large_value_threshold) +
                      ") must not exceed item_size_max (" + format_size(k.item_size_max) + ")");
  }
  if (k.large_value_disk_limit < k.item_size_max) {
    return c.fail({"cache.large_value_disk_limit", "cache.item_size_max"},
                  "large_value_disk_limit (" + format_size(k.large_value_disk_limit) +
                      ") must hold at least one item of item_size_max (" + format_size(k.item_size_max) + ")");
  }
  if (k.large_value_dir.empty() || k.large_value_dir.front() != '/') {
    return c.fail({"cache.large_value_dir"},
                  "large_value_dir: expected an absolute path, got '" + k.large_value_dir + "'");
  }
  struct stat st {};
  if (::stat(k.large_value_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return c.fail({"cache.large_value_dir"}, "large_value_dir: '" + k.large_value_dir + "' is not a directory");
  }
  return true;
}

bool validate_logging(const logging_config& l, checker& c) {
  return c.in_range("logging.async_queue", "async_queue", value_kind::Integer, l.async_queue, kAsyncQueueRange);
}

// role: auto and virtual_ip go together; the address is a literal (the
// kernel's interface list is compared with it, no name is resolved).
bool validate_virtual_ip(const replication_config& r, checker& c) {
  if (r.role == replication_role::Auto && r.virtual_ip.empty())
    return c.fail({"replication.role", "replication.virtual_ip"},
                  "role: auto needs virtual_ip (the address whose holder is the master)");
  if (r.virtual_ip.empty()) return true;
  unsigned char bytes[sizeof(in6_addr)];
  if (::inet_pton(AF_INET, r.virtual_ip.c_str(), bytes) != 1 && ::inet_pton(AF_INET6, r.virtual_ip.c_str(), bytes) != 1)
    return c.fail({"replication.virtual_ip"}, "virtual_ip: '" + r.virtual_ip + "' is not an IPv4 or IPv6 address");
  if (r.role != replication_role::Auto)
    return c.fail({"replication.role", "replication.virtual_ip"},
                  std::string("role: with virtual_ip the address decides the role; use role: auto (or leave role "
                              "out), got ") +
                      to_string(r.role));
  if (!r.master.empty())
    return c.fail({"replication.master"}, "master: with role: auto the master is virtual_ip; remove master");
  return true;
}

// The ring must take any record a worker hands it: values above
// large_value_threshold travel as a reference, the rest inline, and a record
// may be at most half the ring.
bool validate_replication(const replication_config& r, const cache_config& k, checker& c) {
  if (r.role == replication_role::Slave && r.master.empty())
    return c.fail({"replication.master", "replication.role"}, "master: a slave needs the master's host");
  if (r.ack == replication_ack::Slave && r.role != replication_role::Master && r.role != replication_role::Auto)
    return c.fail({"replication.ack", "replication.role"},
                  "ack: slave needs role: master or auto (a write waits for a slave)");
  if (!validate_virtual_ip(r, c)) return false;
  const uint64_t inline_max = std::min(k.item_size_max, k.large_value_threshold) + 4 * kKiB;
  if (r.queue_size < 4 * inline_max) {
    return c.fail({"replication.queue_size", "cache.item_size_max", "cache.large_value_threshold"},
                  "queue_size (" + format_size(r.queue_size) + ") must be at least 4 times the largest " +
                      "value kept in memory (" + format_size(inline_max) + ")");
  }
  return true;
}

}  // namespace

const char* to_string(replication_role r) {
  switch (r) {
    case replication_role::Master: return "master";
    case replication_role::Slave: return "slave";
    case replication_role::Auto: return "auto";
    case replication_role::None: break;
  }
  return "none";
}

std::string replication_listen_host(const config& c) {
  const replication_config& r = c.replication;
  if (!r.listen_host.empty()) return r.listen_host;
  if (r.role == replication_role::Auto && !r.virtual_ip.empty()) return r.virtual_ip;
  if (c.listen.tcp.empty()) return "127.0.0.1";
  for (const tcp_address& a : c.listen.tcp) {
    // Every interface, as the listeners spell it ("*" is mm::address's 0.0.0.0).
    unsigned char any[sizeof(in6_addr)] = {};
    unsigned char bytes[sizeof(in6_addr)] = {};
    if (a.host == "*") return "0.0.0.0";
    if (::inet_pton(AF_INET, a.host.c_str(), bytes) == 1 && std::memcmp(bytes, any, 4) == 0) return "0.0.0.0";
    if (::inet_pton(AF_INET6, a.host.c_str(), bytes) == 1 && std::memcmp(bytes, any, 16) == 0) return "::";
  }
  return c.listen.tcp.front().host;
}

const char* to_string(replication_ack a) { return a == replication_ack::Slave ? "slave" : "none"; }

// memcached's words where it has them (memcached.c: -l notls, -Z without a
// TCP port). The certificate files are read by the server when it starts
// (server/tls_context.h), which reports a bad one in memcached's words too.
bool validate_tls(const config& cfg, checker& c) {
  const tls_config& t = cfg.tls;
  bool notls = false, btls = false, mtls = false;
  for (const tcp_address& a : cfg.listen.tcp) {
    notls = notls || a.notls;
    btls = btls || a.peer == peer_check::None;
    mtls = mtls || a.peer == peer_check::Required;
  }
  if (!t.enabled) {
    if (notls) return c.fail({"listen.tcp"}, "'notls' option is valid only when SSL is enabled");
    if (btls) return c.fail({"listen.tcp"}, "'btls' option is valid only when SSL is enabled");
    // memcached says 'otls' here (a typo); the prefix is mtls.
    if (mtls) return c.fail({"listen.tcp"}, "'mtls' option is valid only when SSL is enabled");
    return true;
  }
  if (mtls && t.ca_cert.empty()) {
    return c.fail({"listen.tcp", "tls.ca_cert"},
                  "an mtls: listener checks client certificates against ssl_ca_cert (tls.ca_cert): set it");
  }
  bool tcp = !cfg.listen.tcp.empty();
  for (const listener_route& l : cfg.router.listeners) tcp = tcp || !l.address.starts_with("unix:");
  if (!tcp) return c.fail({"tls.enabled", "listen.tcp"}, "ERROR: You cannot enable SSL without a TCP port.");
  if (t.chain_cert.empty()) {
    return c.fail({"tls.chain_cert", "tls.enabled"},
                  "TLS is on (-Z, tls.enabled) but no certificate is given: set ssl_chain_cert "
                  "(tls.chain_cert) and ssl_key (tls.key)");
  }
  return true;
}

// TLS to backend servers: the files each TLS pool names can be read (their
// contents are read when the router builds its contexts, at start and
// reload: a bad certificate fails those with OpenSSL's reason).
bool validate_backend_tls(const router_config& rc, checker& c) {
  for (const pool_config& p : rc.pools) {
    if (!p.tls.enabled) continue;
    std::string why;
    if (!check_tls_files(p.tls, "pool '" + p.name + "': tls", &why)) {
      return c.fail({"pools." + p.name + ".tls", "pools." + p.name, "router.tls"}, why);
    }
  }
  return true;
}

// replication.tls: mutual, so all three files, readable; verification on.
bool validate_replication_tls(const replication_config& r, checker& c) {
  if (!r.tls.enabled) return true;
  if (r.tls.chain_cert.empty() || r.tls.ca_cert.empty()) {
    return c.fail({"replication.tls"},
                  "replication.tls: chain_cert, key and ca_cert are all needed (mutual TLS: "
                  "each node shows its certificate and checks the other's against ca_cert)");
  }
  if (r.tls.verify == tls_verify::Off) {
    return c.fail({"replication.tls.verify", "replication.tls"},
                  "replication.tls: verify cannot be off (a slave without an accepted certificate gets nothing)");
  }
  std::string why;
  if (!check_tls_files(r.tls, "replication.tls", &why)) return c.fail({"replication.tls"}, why);
  return true;
}

const char* const kSaslBindingConflict = "ERROR: You cannot allow the ASCII protocol while using SASL.";
const char* const kAsciiAuthBindingConflict =
    "ERROR: You cannot allow the BINARY protocol while using ascii authentication tokens.";

std::string auth_flag_conflict(bool sasl, bool ascii_auth, uint16_t udp_port) {
  if (sasl && udp_port != 0) return "ERROR: Cannot enable UDP while using binary SASL authentication.";
  if (sasl && ascii_auth) {
    return "-S and -Y: SASL authenticates the binary protocol only and -Y the ascii protocol only; "
           "use one of them";
  }
  if (ascii_auth && udp_port != 0) return "Cannot use UDP with ascii authentication enabled (-U 0 to disable)";
  return {};
}

bool validate(const config& cfg, validation_error* error) {
  checker c(error);
  if (!validate_tls(cfg, c)) return false;
  if (!validate_backend_tls(cfg.router, c)) return false;
  if (!validate_replication_tls(cfg.replication, c)) return false;
  return validate_listen(cfg.listen, !cfg.router.listeners.empty(), c) && validate_listeners(cfg, c) &&
         validate_server(cfg.server, c) && validate_auth(cfg, c) && validate_cache(cfg.cache, c) &&
         validate_logging(cfg.logging, c) && validate_replication(cfg.replication, cfg.cache, c);
}

}  // namespace ithaca::config
