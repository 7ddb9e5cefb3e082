// Address blocks in CIDR notation, for `replication.allow`: "10.0.0.0/8",
// "2001:db8::/32", or one address ("127.0.0.1", "::1": /32, /128).
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace ithaca::config {

struct cidr {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // network order; IPv4 in the first 4
  unsigned prefix = 0;              // 0..32 or 0..128
  bool operator==(const cidr&) const = default;
};

// Parses `text`. False with *error ("'10.0.0.1/8': host bits are set (did
// you mean 10.0.0.0/8?)") on anything but a numeric address with an optional
// prefix length that leaves no host bits set. No names are resolved.
bool parse_cidr(std::string_view text, cidr& out, std::string* error);
// "10.0.0.0/8", "2001:db8::/32".
std::string to_string(const cidr& c);

// Whether the peer address `sa` (AF_INET or AF_INET6; an IPv4-mapped IPv6
// address, as a dual-stack listener reports an IPv4 peer, counts as IPv4)
// lies in `c`. Any other family is in no block. [any thread]
bool cidr_contains(const cidr& c, const sockaddr_storage& sa);

}  // namespace ithaca::config
