#include "vip.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>

namespace ithaca::replication {

bool parse_ip_literal(std::string_view text, ip_literal& out) {
  std::string s(text);
  ip_literal a;
  if (::inet_pton(AF_INET, s.c_str(), a.bytes) == 1) {
    a.family = AF_INET;
  } else if (::inet_pton(AF_INET6, s.c_str(), a.bytes) == 1) {
    a.family = AF_INET6;
  } else {
    return false;
  }
  a.text = std::move(s);
  out = a;
  return true;
}

vip_holding holds_address(const ip_literal& address, std::string* error) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) {
    if (error) *error = std::string("getifaddrs: ") + std::strerror(errno);
    return vip_holding::Unknown;
  }
  bool found = false;
  for (const ifaddrs* i = list; i && !found; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != address.family) continue;
    if (address.family == AF_INET) {
      const auto* sin = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
      found = std::memcmp(&sin->sin_addr, address.bytes, sizeof sin->sin_addr) == 0;
    } else {
      const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);
      found = std::memcmp(&sin6->sin6_addr, address.bytes, sizeof sin6->sin6_addr) == 0;
    }
  }
  ::freeifaddrs(list);
  return found ? vip_holding::Yes : vip_holding::No;
}

}  // namespace ithaca::replication
