// The virtual-IP check: address literals, and the kernel's interface list
// (the loopback addresses are on `lo` in every network namespace).
#include <doctest/doctest.h>

#include <netinet/in.h>

#include "vip.h"

using namespace ithaca::replication;

TEST_CASE("ip literals: v4 and v6, no names") {
  ip_literal a;
  REQUIRE(parse_ip_literal("192.0.2.10", a));
  CHECK(a.family == AF_INET);
  CHECK(a.bytes[0] == 192);
  CHECK(a.bytes[3] == 10);
  CHECK(a.text == "192.0.2.10");
  REQUIRE(parse_ip_literal("2001:db8::10", a));
  CHECK(a.family == AF_INET6);
  CHECK(a.bytes[15] == 0x10);
  CHECK_FALSE(parse_ip_literal("localhost", a));
  CHECK_FALSE(parse_ip_literal("[::1]", a));
  CHECK_FALSE(parse_ip_literal("10.0.0.1:11211", a));
  CHECK_FALSE(parse_ip_literal("", a));
}

TEST_CASE("holds_address: 127.0.0.1 is on lo; 127.0.0.2 is routed locally but on no interface") {
  ip_literal a;
  std::string error;
  REQUIRE(parse_ip_literal("127.0.0.1", a));
  CHECK(holds_address(a, &error) == vip_holding::Yes);
  // A bind() probe would say yes here (127.0.0.0/8 is a local route).
  REQUIRE(parse_ip_literal("127.0.0.2", a));
  CHECK(holds_address(a, &error) == vip_holding::No);
  REQUIRE(parse_ip_literal("192.0.2.77", a));  // TEST-NET-1
  CHECK(holds_address(a, &error) == vip_holding::No);
  REQUIRE(parse_ip_literal("2001:db8::77", a));
  CHECK(holds_address(a, &error) == vip_holding::No);
  CHECK(error.empty());
}
