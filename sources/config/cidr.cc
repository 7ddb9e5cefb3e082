#include "cidr.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include "units.h"

namespace ithaca::config {

namespace {

bool fail_cidr(std::string* error, std::string_view text, const std::string& why) {
  if (error) {
    // Built with append: GCC 12 warns falsely (-Wrestrict) on a + chain here.
    std::string message("'");
    message.append(text).append("': ").append(why);
    *error = std::move(message);
  }
  return false;
}

// Whether the first `prefix` bits of a and b agree.
bool same_prefix(const uint8_t* a, const uint8_t* b, unsigned prefix) {
  const unsigned whole = prefix / 8;
  if (std::memcmp(a, b, whole) != 0) return false;
  const unsigned rest = prefix % 8;
  if (rest == 0) return true;
  const uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (a[whole] & mask) == (b[whole] & mask);
}

}  // namespace

bool parse_cidr(std::string_view text, cidr& out, std::string* error) {
  const size_t slash = text.find('/');
  const std::string host(text.substr(0, slash));
  cidr c;
  if (::inet_pton(AF_INET, host.c_str(), c.bytes.data()) == 1) {
    c.v6 = false;
  } else if (::inet_pton(AF_INET6, host.c_str(), c.bytes.data()) == 1) {
    c.v6 = true;
  } else {
    return fail_cidr(error, text, "not an IPv4 or IPv6 address (optionally with /prefix length)");
  }
  const unsigned bits = c.v6 ? 128 : 32;
  c.prefix = bits;
  if (slash != std::string_view::npos) {
    uint64_t p = 0;
    if (!parse_unsigned(text.substr(slash + 1), p) || p > bits) {
      return fail_cidr(
          error, text,
          "the prefix length must be a number from 0 to " + std::to_string(bits) + (c.v6 ? " for IPv6" : " for IPv4"));
    }
    c.prefix = static_cast<unsigned>(p);
  }
  // Host bits set ("10.0.0.1/8") is most likely a typo for another block.
  cidr network = c;
  for (unsigned i = 0; i < bits / 8; i++) {
    const unsigned first = i * 8;
    if (first >= c.prefix) {
      network.bytes[i] = 0;
    } else if (c.prefix - first < 8) {
      network.bytes[i] &= static_cast<uint8_t>(0xff << (8 - (c.prefix - first)));
    }
  }
  if (network.bytes != c.bytes) {
    return fail_cidr(error, text, "host bits are set (did you mean " + to_string(network) + "?)");
  }
  out = c;
  return true;
}

std::string to_string(const cidr& c) {
  char buf[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(c.v6 ? AF_INET6 : AF_INET, c.bytes.data(), buf, sizeof buf);
  return std::string(buf) + "/" + std::to_string(c.prefix);
}

bool cidr_contains(const cidr& c, const sockaddr_storage& sa) {
  if (sa.ss_family == AF_INET) {
    if (c.v6) return false;
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(sa);
    return same_prefix(reinterpret_cast<const uint8_t*>(&v4.sin_addr), c.bytes.data(), c.prefix);
  }
  if (sa.ss_family != AF_INET6) return false;
  const auto& v6 = reinterpret_cast<const sockaddr_in6&>(sa);
  const auto* bytes = reinterpret_cast<const uint8_t*>(&v6.sin6_addr);
  if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr)) {
    return !c.v6 && same_prefix(bytes + 12, c.bytes.data(), c.prefix);
  }
  return c.v6 && same_prefix(bytes, c.bytes.data(), c.prefix);
}

}  // namespace ithaca::config
