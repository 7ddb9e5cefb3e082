#include "preflight.h"

#include <netdb.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "auth_files.h"
#include "spool_dir.h"

namespace ithaca::config {

namespace {

// "" when `path` can be read by this process, else "WHAT FILE: reason".
std::string unreadable(const std::string& path, const std::string& what) {
  if (path.empty() || ::access(path.c_str(), R_OK) == 0) return {};
  return what + " " + path + ": " + std::strerror(errno);
}

// The clients' TLS files (tls:, memcached's -o ssl_*): the start reads them
// when it builds its context and fails on one it cannot read.
std::string client_tls_problem(const tls_config& t) {
  if (!t.enabled) return {};
  for (const auto& [name, path] :
       {std::pair{"tls.chain_cert (ssl_chain_cert)", &t.chain_cert}, std::pair{"tls.key (ssl_key)", &t.key},
        std::pair{"tls.ca_cert (ssl_ca_cert)", &t.ca_cert}}) {
    if (std::string why = unreadable(*path, name); !why.empty()) return why;
  }
  return {};
}

// router.tls names files even when no pool uses TLS yet: a reload that turns
// a pool's tls on would fail on them then, so a wrong path is said now.
std::string router_tls_problem(const backend_tls& t) {
  for (const auto& [name, path] :
       {std::pair{"router.tls.ca_cert", &t.ca_cert}, std::pair{"router.tls.chain_cert", &t.chain_cert},
        std::pair{"router.tls.key", &t.key}}) {
    if (std::string why = unreadable(*path, name); !why.empty()) return why;
  }
  return {};
}

// Whether a TCP port can be bound now on `host` (as the listener will: with
// SO_REUSEADDR). "" when it can, or when the host does not resolve to an
// address here (the start says so in its own words); else the reason.
std::string bind_problem(const std::string& host, uint16_t port) {
  if (port == 0) return {};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const char* node = (host.empty() || host == "*") ? nullptr : host.c_str();
  if (::getaddrinfo(node, service.c_str(), &hints, &found) != 0) return {};
  std::string problem;
  for (addrinfo* a = found; a != nullptr && problem.empty(); a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (a->ai_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 && errno == EADDRINUSE) problem = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return problem;
}

void warn_if_bound(std::vector<std::string>& out, const std::string& what, const std::string& host, uint16_t port) {
  if (std::string why = bind_problem(host, port); !why.empty()) {
    out.push_back(what + " " + host + ":" + std::to_string(port) + " is in use now (" + why +
                  "): the start fails unless it is free by then");
  }
}

}  // namespace

std::vector<std::string> config_warnings(const config& cfg) {
  std::vector<std::string> out;
  for (const pool_config& p : cfg.router.pools) {
    for (const backend_server& s : p.servers) {
      if (s.port_written) continue;
      out.push_back("pool '" + p.name + "': server '" + s.written + "' has no port; it takes " +
                    std::to_string(kDefaultPort) + " (" + s.address + ")");
    }
  }
  return out;
}

preflight_report preflight(const config& cfg) {
  preflight_report r;
  r.error = client_tls_problem(cfg.tls);
  if (r.error.empty()) r.error = router_tls_problem(cfg.router.tls);
  if (r.error.empty() && uses_spool(cfg)) {
    const std::string dir = spool_dir_of(cfg);
    // One that does not exist yet but can be made is fine: the start makes
    // it (a warning there would be noise on every fresh machine).
    if (std::string problem = spool_dir_problem(dir); !problem.empty()) {
      r.error = "router.spool_dir: " + problem + " (reliable deletes' spool)";
    }
  }
  // process.user (-u): the start looks it up as memcached does, and stops there.
  if (r.error.empty() && !cfg.process.user.empty() && ::getpwnam(cfg.process.user.c_str()) == nullptr) {
    r.error = "process.user (-u): can't find the user " + cfg.process.user + " to switch to";
  }
  // The password files the start reads (-Y's: memcached's words; a note is a warning).
  if (r.error.empty() && !cfg.server.auth_file.empty()) {
    ascii_auth_table table;
    std::vector<std::string> notes;
    if (!load_ascii_auth(cfg.server.auth_file, table, &r.error, &notes)) return r;
    for (std::string& n : notes) r.warnings.push_back("server.auth_file " + cfg.server.auth_file + ": " + n);
  }
  if (r.error.empty() && cfg.server.sasl) {
    sasl_pwdb_table table;
    load_sasl_pwdb(cfg.server.sasl_pwdb, table, &r.error);
  }
  if (!r.error.empty()) return r;
  for (std::string& w : config_warnings(cfg)) r.warnings.push_back(std::move(w));
  for (const tcp_address& a : cfg.listen.tcp) warn_if_bound(r.warnings, "listen.tcp", a.host, a.port);
  for (const listener_route& l : cfg.router.listeners) {
    tcp_address a;
    if (l.address.starts_with("unix:") || !parse_listen_address(l.address, kDefaultPort, a, nullptr)) continue;
    warn_if_bound(r.warnings, "listeners", a.host, a.port);
  }
  if (cfg.metrics.enabled)
    warn_if_bound(r.warnings, "metrics.listen", cfg.metrics.listen.host, cfg.metrics.listen.port);
  return r;
}

}  // namespace ithaca::config
