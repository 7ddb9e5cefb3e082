// The process-level helpers that can run inside a test: -u's user lookup,
// -r's core limit, the addresses "every interface" binds.
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "any_address.h"
#include "process_limits.h"
#include "run_as_user.h"

namespace ithaca::server {

TEST_CASE("find_user gives the user's ids and groups, its own gid among them") {
  target_user u;
  std::string error;
  REQUIRE(find_user("root", u, &error));
  CHECK(u.name == "root");
  CHECK(u.uid == 0);
  CHECK(u.gid == 0);
  CHECK(std::find(u.groups.begin(), u.groups.end(), gid_t{0}) != u.groups.end());
}

TEST_CASE("an unknown user is refused in memcached's words") {
  target_user u;
  std::string error;
  CHECK_FALSE(find_user("no-such-user-ithaca-test", u, &error));
  CHECK(error == "can't find the user no-such-user-ithaca-test to switch to");
}

TEST_CASE("-r raises a core limit of 0 so that a core can be written") {
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_CORE, &saved) == 0);
  rlimit zero{0, saved.rlim_max};
  REQUIRE(::setrlimit(RLIMIT_CORE, &zero) == 0);
  CHECK(raise_core_limit());
  rlimit now{};
  REQUIRE(::getrlimit(RLIMIT_CORE, &now) == 0);
  CHECK(now.rlim_cur != 0);
  // Without the privilege to pass it, the soft limit reaches the hard one.
  if (::geteuid() != 0) CHECK(now.rlim_cur == saved.rlim_max);
  ::setrlimit(RLIMIT_CORE, &saved);
}

TEST_CASE("every interface is 0.0.0.0, and [::] where an IPv6 wildcard can be bound") {
  const auto& hosts = any_address_hosts();
  REQUIRE(!hosts.empty());
  CHECK(hosts[0] == "0.0.0.0");
  const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool v6 = false;
  if (fd >= 0) {
    const int one = 1;
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    sockaddr_in6 any{};
    any.sin6_family = AF_INET6;
    any.sin6_addr = in6addr_any;
    v6 = ::bind(fd, reinterpret_cast<const sockaddr*>(&any), sizeof any) == 0;
    ::close(fd);
  }
  CHECK(hosts.size() == (v6 ? 2u : 1u));
  if (v6) CHECK(hosts[1] == "::");
  CHECK(&any_address_hosts() == &hosts);  // probed once
}

}  // namespace ithaca::server
