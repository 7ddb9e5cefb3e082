#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include "cidr.h"

using namespace ithaca::config;

namespace {

cidr parsed(const char* text) {
  cidr c;
  std::string error;
  INFO(text);
  REQUIRE_MESSAGE(parse_cidr(text, c, &error), error);
  return c;
}

std::string refusal(const char* text) {
  cidr c;
  c.prefix = 99;
  std::string error;
  CHECK_FALSE(parse_cidr(text, c, &error));
  CHECK(c.prefix == 99);  // untouched
  return error;
}

sockaddr_storage peer(const char* address) {
  sockaddr_storage ss{};
  auto& v4 = reinterpret_cast<sockaddr_in&>(ss);
  auto& v6 = reinterpret_cast<sockaddr_in6&>(ss);
  if (::inet_pton(AF_INET, address, &v4.sin_addr) == 1) {
    v4.sin_family = AF_INET;
  } else {
    REQUIRE(::inet_pton(AF_INET6, address, &v6.sin6_addr) == 1);
    v6.sin6_family = AF_INET6;
  }
  return ss;
}

bool in(const char* block, const char* address) { return cidr_contains(parsed(block), peer(address)); }

}  // namespace

TEST_CASE("cidr: IPv4 blocks and single addresses") {
  CHECK(to_string(parsed("10.0.0.0/8")) == "10.0.0.0/8");
  CHECK(to_string(parsed("127.0.0.2")) == "127.0.0.2/32");
  CHECK(to_string(parsed("0.0.0.0/0")) == "0.0.0.0/0");
  CHECK(to_string(parsed("192.168.4.0/22")) == "192.168.4.0/22");
  CHECK_FALSE(parsed("10.0.0.0/8").v6);
}

TEST_CASE("cidr: IPv6 blocks and single addresses") {
  CHECK(to_string(parsed("2001:db8::/32")) == "2001:db8::/32");
  CHECK(to_string(parsed("::1")) == "::1/128");
  CHECK(to_string(parsed("::/0")) == "::/0");
  CHECK(to_string(parsed("fe80::/10")) == "fe80::/10");
  CHECK(parsed("::1").v6);
}

TEST_CASE("cidr: refused forms say why") {
  CHECK(refusal("10.0.0.0/33") == "'10.0.0.0/33': the prefix length must be a number from 0 to 32 for IPv4");
  CHECK(refusal("::1/129") == "'::1/129': the prefix length must be a number from 0 to 128 for IPv6");
  CHECK(refusal("10.0.0.0/") == "'10.0.0.0/': the prefix length must be a number from 0 to 32 for IPv4");
  CHECK(refusal("10.0.0.0/-1") == "'10.0.0.0/-1': the prefix length must be a number from 0 to 32 for IPv4");
  CHECK(refusal("10.0.0.0/8/8") == "'10.0.0.0/8/8': the prefix length must be a number from 0 to 32 for IPv4");
  CHECK(refusal("10.0.0.1/8") == "'10.0.0.1/8': host bits are set (did you mean 10.0.0.0/8?)");
  CHECK(refusal("192.168.5.0/22") == "'192.168.5.0/22': host bits are set (did you mean 192.168.4.0/22?)");
  CHECK(refusal("2001:db8::1/32") == "'2001:db8::1/32': host bits are set (did you mean 2001:db8::/32?)");
  for (const char* bad : {"", "/8", "localhost", "10.0.0", "10.0.0.256", " 10.0.0.0/8", "[::1]", "1.2.3.4:80"}) {
    CAPTURE(bad);
    CHECK(refusal(bad).find("not an IPv4 or IPv6 address") != std::string::npos);
  }
}

TEST_CASE("cidr: membership, at the edges of a block") {
  CHECK(in("127.0.0.2/32", "127.0.0.2"));
  CHECK_FALSE(in("127.0.0.2/32", "127.0.0.1"));
  CHECK(in("10.0.0.0/8", "10.255.255.255"));
  CHECK_FALSE(in("10.0.0.0/8", "11.0.0.0"));
  CHECK(in("192.168.4.0/22", "192.168.7.255"));
  CHECK_FALSE(in("192.168.4.0/22", "192.168.8.0"));
  CHECK_FALSE(in("192.168.4.0/22", "192.168.3.255"));
  CHECK(in("0.0.0.0/0", "203.0.113.9"));
  CHECK(in("2001:db8::/32", "2001:db8:ffff::1"));
  CHECK_FALSE(in("2001:db8::/32", "2001:db9::1"));
  CHECK(in("fe80::/10", "febf::1"));
  CHECK_FALSE(in("fe80::/10", "fec0::1"));
  CHECK(in("::1", "::1"));
  CHECK(in("::/0", "2001:db8::1"));
}

TEST_CASE("cidr: families do not mix, but an IPv4-mapped peer is IPv4") {
  CHECK_FALSE(in("::/0", "127.0.0.1"));
  CHECK_FALSE(in("0.0.0.0/0", "::1"));
  CHECK(in("127.0.0.0/8", "::ffff:127.0.0.5"));
  CHECK_FALSE(in("127.0.0.0/8", "::ffff:10.0.0.5"));
  CHECK_FALSE(in("::/0", "::ffff:127.0.0.5"));  // an IPv4 peer, whatever socket it came on
  sockaddr_storage unix_peer{};
  unix_peer.ss_family = AF_UNIX;
  CHECK_FALSE(cidr_contains(parsed("0.0.0.0/0"), unix_peer));
}
