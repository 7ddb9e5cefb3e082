#include "settings_stats.h"

#include <cstdio>

#include "settings_table.h"

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

settings_facts configured_facts(const config& c) {
  const listen_config& l = c.listen;
  return {
      .tcp_port = l.tcp.empty() ? uint16_t{0} : l.tcp.front().port,
      .io_backend = to_string(c.server.backend),
      .uring_running = true,  // if the config allows it (proxy_uring_enabled's other terms)
      .detail_enabled = c.server.detail_enabled,
      .lru_crawler = c.cache.lru_crawler,
      .slab_chunk_max = slab_chunk_max(c.cache),
  };
}

// One line per row of settings_table.h, from one config snapshot. [any thread]
std::vector<std::pair<std::string, std::string>> settings_stats(const config& c, const settings_facts& f) {
  const listen_config& l = c.listen;
  auto n = [](uint64_t v) { return std::to_string(v); };
  auto yes_no = [](bool b) { return std::string(b ? "yes" : "no"); };
  const bool router = !c.router.pools.empty();
  std::vector<std::pair<std::string, std::string>> out;
#define ITHACA_X(name, type, prom, help, page, labels, when, read) \
  if (when) out.emplace_back(name, read);
  ITHACA_SETTINGS_STATS(ITHACA_X)
#undef ITHACA_X
  return out;
}

std::vector<std::pair<std::string, std::string>> settings_stats(const config& c) {
  return settings_stats(c, configured_facts(c));
}

}  // namespace ithaca::config
