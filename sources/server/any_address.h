// "*", every interface: what memcached binds without -l (getaddrinfo of no
// host gives it 0.0.0.0 and ::). Here: 0.0.0.0 and, where the host has IPv6,
// [::] (IPV6_V6ONLY, so both take the same port). A host without IPv6
// (socket(AF_INET6) or a bind of [::] refused) listens on IPv4 and says so in
// one log line.
#pragma once

#include <string>
#include <vector>

namespace ithaca::server {

// {"0.0.0.0", "::"}, or {"0.0.0.0"} without IPv6 (probed once, logged once).
// [main thread, at start]
const std::vector<std::string>& any_address_hosts();

}  // namespace ithaca::server
