#include "any_address.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace ithaca::server {

namespace {

// "" when an IPv6 wildcard socket can be bound here (port 0: any free one),
// else why not.
std::string ipv6_problem() {
  const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("socket: ") + std::strerror(errno);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  sockaddr_in6 any{};
  any.sin6_family = AF_INET6;
  any.sin6_addr = in6addr_any;
  std::string problem;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&any), sizeof any) != 0) {
    problem = std::string("bind [::]: ") + std::strerror(errno);
  }
  ::close(fd);
  return problem;
}

}  // namespace

const std::vector<std::string>& any_address_hosts() {
  static const std::vector<std::string> hosts = [] {
    const std::string problem = ipv6_problem();
    if (problem.empty()) return std::vector<std::string>{"0.0.0.0", "::"};
    spdlog::warn("every interface: IPv6 is not available here ({}); listening on IPv4 (0.0.0.0) only", problem);
    return std::vector<std::string>{"0.0.0.0"};
  }();
  return hosts;
}

}  // namespace ithaca::server
