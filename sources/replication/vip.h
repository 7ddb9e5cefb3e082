// Does this node hold the virtual IP? yrmcds's question (cybozu::has_ip_address):
// the address is on one of the node's interfaces, as the kernel lists them
// (getifaddrs). The role monitor (server/role_monitor.h) asks it every
// check_interval; keepalived or an operator moves the address.
//
// Why getifaddrs and not a bind() probe: bind() to an address that is not
// local fails with EADDRNOTAVAIL, but it succeeds for any address when
// net.ipv4.ip_nonlocal_bind (or ipv6.ip_nonlocal_bind) is 1, which hosts
// running keepalived often set so that services can bind the virtual IP
// before they hold it, and for every address of a local route (all of
// 127.0.0.0/8, an `ip route add local` subnet) that no interface carries. The
// interface list answers exactly "is the address assigned here".
//
// Cost: one netlink dump (a few syscalls and one allocation, answered by the
// kernel at once, no wait), so it runs inline on the caller's machine. [any thread]
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ithaca::replication {

struct ip_literal {
  int family = 0;                // AF_INET or AF_INET6
  unsigned char bytes[16] = {};  // network order; 4 used for AF_INET
  std::string text;
};

// "192.0.2.10", "2001:db8::10" (no name resolution, no brackets, no scope).
bool parse_ip_literal(std::string_view text, ip_literal& out);

enum class vip_holding : std::uint8_t {
  Yes,      // the address is on a local interface
  No,       // it is not
  Unknown,  // the kernel could not be asked (getifaddrs failed: *error says why)
};

vip_holding holds_address(const ip_literal& address, std::string* error);

}  // namespace ithaca::replication
