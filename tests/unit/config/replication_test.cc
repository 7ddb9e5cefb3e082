// The replication section: every key, its errors with file:line, the sample.
#include <doctest/doctest.h>

#include <cstdlib>

#include "load.h"
#include "restart_only.h"

using namespace ithaca::config;

namespace {
std::string load_repl(const std::string& yaml, config* out = nullptr) {
  config c;
  std::string error;
  bool ok = load_config_text(yaml, "replica.yaml", c, &error);
  CHECK(ok == error.empty());
  if (out) *out = c;
  return error;
}
}  // namespace

TEST_CASE("replication defaults: off, yrmcds's port and timeout") {
  config c;
  CHECK(c.replication.role == replication_role::None);
  CHECK(c.replication.port == 11213);
  CHECK(c.replication.slave_timeout_ms == 10000);
  CHECK(c.replication.master_timeout_ms == 10000);
  CHECK_FALSE(c.replication.serve_reads);
}

TEST_CASE("replication: every key") {
  config c;
  REQUIRE(load_repl(R"(
replication:
  role: slave
  listen: 10.0.0.1
  port: 11300
  master: 10.0.0.2
  slave_timeout: 3s
  heartbeat_interval: 200ms
  master_timeout: 4s
  send_buffer: 8m
  queue_size: 16m
  serve_reads: true
)",
                    &c) == "");
  const replication_config& r = c.replication;
  CHECK(r.role == replication_role::Slave);
  CHECK(r.listen_host == "10.0.0.1");
  CHECK(r.port == 11300);
  CHECK(r.master == "10.0.0.2");
  CHECK(r.slave_timeout_ms == 3000);
  CHECK(r.heartbeat_interval_ms == 200);
  CHECK(r.master_timeout_ms == 4000);
  CHECK(r.send_buffer == 8ull << 20);
  CHECK(r.queue_size == 16ull << 20);
  CHECK(r.serve_reads);
}

TEST_CASE("replication: errors carry file:line") {
  CHECK(load_repl("replication:\n  role: primary\n") ==
        "replica.yaml:2: role: expected one of none, master, slave or auto, got 'primary'");
  CHECK(load_repl("replication:\n  slave_timout: 1s\n").find("replica.yaml:2: ") == 0);
  CHECK(load_repl("replication:\n  slave_timeout: 10ms\n").find("replica.yaml:2: slave_timeout: expected") == 0);
  CHECK(load_repl("replication:\n  master_timeout: 50ms\n").find("replica.yaml:2: master_timeout: expected") == 0);
  CHECK(load_repl("replication:\n  master_timeout: 2h\n").find("replica.yaml:2: master_timeout: expected") == 0);
  CHECK(load_repl("replication:\n  role: slave\n") == "replica.yaml:2: master: a slave needs the master's host");
  CHECK(load_repl("cache:\n  large_value_threshold: 1m\nreplication:\n  queue_size: 2m\n") ==
        "replica.yaml:4: queue_size (2 MiB) must be at least 4 times the largest value kept in memory "
        "(1028 KiB)");
}

TEST_CASE("replication settings need a restart") {
  config a, b;
  b.replication.role = replication_role::Master;
  CHECK(restart_only_changes(a, b) == std::vector<std::string>{"replication"});
}

TEST_CASE("the sample config/replica.yaml parses") {
  const char* path = std::getenv("ITHACA_REPLICA_CONFIG");
  REQUIRE_MESSAGE(path != nullptr, "run through meson test (sets ITHACA_REPLICA_CONFIG)");
  config c;
  std::string error;
  REQUIRE_MESSAGE(load_config(path, c, &error), error);
  CHECK(c.replication.role == replication_role::Master);
  CHECK(c.replication.listen_host == "127.0.0.1");
  CHECK(c.replication.port == 11213);
  CHECK(c.replication.ack == replication_ack::None);
  CHECK(c.replication.ack_timeout_ms == 1000);
}

TEST_CASE("replication: ack and ack_timeout") {
  config c;
  CHECK(c.replication.ack == replication_ack::None);
  CHECK(c.replication.ack_timeout_ms == 1000);
  REQUIRE(load_repl("replication:\n  role: master\n  ack: slave\n  ack_timeout: 250ms\n", &c) == "");
  CHECK(c.replication.ack == replication_ack::Slave);
  CHECK(c.replication.ack_timeout_ms == 250);
  CHECK(load_repl("replication:\n  role: master\n  ack: all\n") ==
        "replica.yaml:3: ack: expected one of none or slave, got 'all'");
  CHECK(load_repl("replication:\n  role: master\n  ack_timeout: 0ms\n").find("replica.yaml:3: ack_timeout: expected") ==
        0);
  CHECK(load_repl("replication:\n  ack: slave\n") ==
        "replica.yaml:2: ack: slave needs role: master or auto (a write waits for a slave)");
  // Live: a SIGHUP rebuilds the route tree with them.
  config a, b;
  a.replication.role = b.replication.role = replication_role::Master;
  b.replication.ack = replication_ack::Slave;
  b.replication.ack_timeout_ms = 5;
  CHECK(restart_only_changes(a, b).empty());
}

TEST_CASE("roles by virtual IP: defaults (yrmcds's 1 s reactor tick and 5 s promotion wait)") {
  config c;
  CHECK(c.replication.virtual_ip.empty());
  CHECK(c.replication.check_interval_ms == 1000);
  CHECK(c.replication.failover_delay_ms == 5000);
  CHECK(std::string(to_string(replication_role::Auto)) == "auto");
}

TEST_CASE("roles by virtual IP: virtual_ip alone means role auto") {
  config c;
  REQUIRE(load_repl("replication:\n  virtual_ip: 10.0.0.100\n  check_interval: 100ms\n  failover_delay: 2s\n", &c) ==
          "");
  CHECK(c.replication.role == replication_role::Auto);
  CHECK(c.replication.virtual_ip == "10.0.0.100");
  CHECK(c.replication.check_interval_ms == 100);
  CHECK(c.replication.failover_delay_ms == 2000);
  REQUIRE(load_repl("replication:\n  role: auto\n  virtual_ip: 2001:db8::1\n  failover_delay: 0s\n", &c) == "");
  CHECK(c.replication.role == replication_role::Auto);
  CHECK(c.replication.failover_delay_ms == 0);
}

TEST_CASE("roles by virtual IP: errors carry file:line") {
  CHECK(load_repl("replication:\n  role: auto\n") ==
        "replica.yaml:2: role: auto needs virtual_ip (the address whose holder is the master)");
  CHECK(load_repl("replication:\n  port: 11300\n  virtual_ip: vip.example\n") ==
        "replica.yaml:3: virtual_ip: 'vip.example' is not an IPv4 or IPv6 address");
  CHECK(load_repl("replication:\n  role: master\n  virtual_ip: 10.0.0.1\n") ==
        "replica.yaml:2: role: with virtual_ip the address decides the role; use role: auto (or leave role "
        "out), got master");
  CHECK(load_repl("replication:\n  virtual_ip: 10.0.0.1\n  master: 10.0.0.2\n") ==
        "replica.yaml:3: master: with role: auto the master is virtual_ip; remove master");
  CHECK(load_repl("replication:\n  virtual_ip: 10.0.0.1\n  check_interval: 1ms\n")
            .find("replica.yaml:3: check_interval: expected") == 0);
  CHECK(load_repl("replication:\n  virtual_ip: 10.0.0.1\n  failover_delay: 2h\n")
            .find("replica.yaml:3: failover_delay: expected") == 0);
  CHECK(load_repl("replication:\n  virtual_ip: 10.0.0.1\n  check_intervall: 1s\n").find("replica.yaml:3: ") == 0);
}

TEST_CASE("replication: master_timeout needs a restart") {
  config a, b;
  b.replication.master_timeout_ms = 1000;
  CHECK(restart_only_changes(a, b) == std::vector<std::string>{"replication"});
}

TEST_CASE("roles by virtual IP: the settings need a restart") {
  config a, b;
  b.replication.failover_delay_ms = 1;
  CHECK(restart_only_changes(a, b) == std::vector<std::string>{"replication.failover_delay"});
  b = a;
  b.replication.virtual_ip = "10.0.0.1";
  CHECK(restart_only_changes(a, b) == std::vector<std::string>{"replication.virtual_ip"});
}

TEST_CASE("replication: the default listen host follows the clients' listeners") {
  config c;
  CHECK(replication_listen_host(c) == "0.0.0.0");  // listen.tcp's default: every interface
  c.listen.tcp = {{"127.0.0.1", 11211}};
  CHECK(replication_listen_host(c) == "127.0.0.1");
  c.listen.tcp = {{"10.0.0.5", 11211}, {"127.0.0.1", 11211}};
  CHECK(replication_listen_host(c) == "10.0.0.5");  // the first
  c.listen.tcp = {{"127.0.0.1", 11211}, {"::", 11211}};
  CHECK(replication_listen_host(c) == "::");  // any wildcard wins: slaves could reach clients' port there
  c.listen.tcp = {{"127.0.0.1", 11211}, {"*", 11212}};
  CHECK(replication_listen_host(c) == "0.0.0.0");
  c.listen.tcp.clear();  // unix sockets only: local clients
  CHECK(replication_listen_host(c) == "127.0.0.1");
  c.replication.role = replication_role::Auto;
  c.replication.virtual_ip = "192.0.2.10";
  CHECK(replication_listen_host(c) == "192.0.2.10");  // slaves connect to nothing else
  c.replication.listen_host = "10.1.1.1";
  CHECK(replication_listen_host(c) == "10.1.1.1");  // set: as written
}

TEST_CASE("replication.allow: CIDRs, each error on its line") {
  config c;
  REQUIRE(load_repl("replication:\n  role: master\n  allow: [10.0.0.0/8, '::1', 192.0.2.7]\n", &c) == "");
  REQUIRE(c.replication.allow.size() == 3);
  CHECK(to_string(c.replication.allow[0]) == "10.0.0.0/8");
  CHECK(to_string(c.replication.allow[1]) == "::1/128");
  CHECK(to_string(c.replication.allow[2]) == "192.0.2.7/32");
  REQUIRE(load_repl("replication:\n  allow: 127.0.0.2\n", &c) == "");
  CHECK(c.replication.allow.size() == 1);
  CHECK(load_repl("replication:\n  allow:\n    - 10.0.0.0/8\n    - 10.0.0.1/8\n") ==
        "replica.yaml:4: allow: '10.0.0.1/8': host bits are set (did you mean 10.0.0.0/8?)");
  CHECK(load_repl("replication:\n  allow: [nowhere]\n") ==
        "replica.yaml:2: allow: 'nowhere': not an IPv4 or IPv6 address (optionally with /prefix length)");
  CHECK(load_repl("replication:\n  allow: []\n") ==
        "replica.yaml:2: allow: an empty list; leave allow out to accept any peer, or name the slaves' addresses");
  config a, b;
  b.replication.allow = c.replication.allow;
  CHECK(restart_only_changes(a, b) == std::vector<std::string>{"replication"});
}
