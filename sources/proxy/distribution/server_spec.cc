#include "distribution/server_spec.h"

namespace ithaca::proxy {

namespace {
constexpr std::uint16_t kMemcachedPort = 11211;

std::string host_port(std::string_view host, std::uint16_t port) {
  std::string s(host);
  s += ':';
  s += std::to_string(port);
  return s;
}
}  // namespace

std::string twemproxy_server_name(std::string_view host, std::uint16_t port, std::string_view name) {
  if (!name.empty()) return std::string(name);
  if (port == kMemcachedPort) return std::string(host);
  if (port == 0) return std::string(host) + ':';
  return host_port(host, port);
}

std::string libmemcached_server_name(std::string_view host, std::uint16_t port) {
  if (port == kMemcachedPort) return std::string(host);
  return host_port(host, port);
}

}  // namespace ithaca::proxy
