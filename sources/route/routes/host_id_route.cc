// The `host_id` route (mcrouter's HostIdRoute): one of its children, chosen
// once by this host: the host's id modulo the number of children, so every
// router on a host sends to the same child and the hosts of a fleet spread
// over the children. Chosen when the tree is built, as mcrouter does: the
// route IS that child (no node of its own in `stats routes`).
//
// The host id: mcrouter hashes the first address of the host that is not
// loopback or link-local (getifaddrs' order: IPv4 ones before IPv6 ones)
// with folly's IPAddress hash, which ithaca does not have; ithaca takes the
// CRC-32 of that address as text ("192.0.2.2"), with the salt appended when
// there is one. 0 when the host has no such address. So the child is stable
// per host, but not necessarily the one mcrouter picks.
#include <ifaddrs.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <cstdint>
#include <string>

#include "hash/hash_functions.h"
#include "route_kind.h"
#include "route_kind_reader.h"

namespace ithaca::route {

// The host's first address that is not loopback or link-local, as text;
// "" when there is none (route_util.h). [the thread building the tree;
// computed once]
static const std::string& host_id_address() {
  static const std::string address = [] {
    std::string v4, v6;
    ifaddrs* all = nullptr;
    if (getifaddrs(&all) != 0) return std::string();
    for (ifaddrs* it = all; it != nullptr; it = it->ifa_next) {
      if (it->ifa_addr == nullptr) continue;
      char text[INET6_ADDRSTRLEN] = {};
      if (it->ifa_addr->sa_family == AF_INET && v4.empty()) {
        const in_addr a = reinterpret_cast<const sockaddr_in*>(it->ifa_addr)->sin_addr;
        const std::uint32_t h = ntohl(a.s_addr);
        if ((h >> 24) == 127 || (h >> 16) == 0xa9fe) continue;  // 127/8, 169.254/16
        if (inet_ntop(AF_INET, &a, text, sizeof text) != nullptr) v4 = text;
      } else if (it->ifa_addr->sa_family == AF_INET6 && v6.empty()) {
        const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(it->ifa_addr)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(&a) || IN6_IS_ADDR_LINKLOCAL(&a)) continue;
        if (inet_ntop(AF_INET6, &a, text, sizeof text) != nullptr) v6 = text;
      }
    }
    freeifaddrs(all);
    return v4.empty() ? v6 : v4;
  }();
  return address;
}

std::uint32_t host_id_of(std::string_view salt) {
  const std::string& address = host_id_address();
  return address.empty() ? 0 : proxy::hash_crc32a(address + std::string(salt));
}

namespace {

struct host_id_options final : config::route_options {
  std::string salt;
};

constexpr config::child_slot kHostIdSlots[] = {
    {"", "children", "children", true, 1},
};
constexpr config::option_spec kHostIdOptions[] = {
    config::text_option<&host_id_options::salt>("salt", "salt",
                                                "mixed into the host's id: another spread of hosts over the children"),
};

const route* build_host_id(tree_builder& b, const config::route_config& r) {
  std::vector<const route*> children;
  if (!b.children(r, "", false, 1, children)) return nullptr;
  const std::uint32_t id = host_id_of(config::options_of<host_id_options>(r).salt);
  return children[id % children.size()];
}

constexpr config::route_kind_info kHostIdInfo{
    "host_id",
    "HostIdRoute",
    "one child chosen by this host's id (its address)",
    kHostIdSlots,
    kHostIdOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> { return std::make_shared<host_id_options>(); },
    config::route_kind_info::collapse::NullOrSingleton,
};

}  // namespace

extern constinit const kind_module kHostIdKind{kHostIdInfo, build_host_id};

}  // namespace ithaca::route
