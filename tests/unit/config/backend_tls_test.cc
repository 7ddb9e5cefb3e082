// TLS ithaca speaks as a client: a pool's `tls:`, `router.tls:` (and
// mcrouter's use_ssl with its --pem-* flags), `replication.tls:`. What each
// reads into, how a pool's keys merge over router.tls, and every mistake.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli.h"
#include "load.h"

using namespace ithaca::config;

namespace {

std::string tls_load(const std::string& text, config* out = nullptr, const std::string& name = "t.yaml") {
  config c;
  std::string error;
  const bool ok = load_config_text(text, name, c, &error);
  CHECK(ok == error.empty());
  if (out) *out = c;
  return error;
}

std::string pool_yaml(const std::string& tls, const std::string& router = "") {
  return router + "pools:\n  main:\n    servers: [\"127.0.0.1:11211\"]\n" + tls +
         "route:\n  type: pool\n  pool: main\n";
}

// A file any user may read, standing in for a certificate (only readability
// is checked at load; OpenSSL reads the contents at start-up).
constexpr char kReadable[] = "/etc/hostname";

}  // namespace

TEST_CASE("merge_tls: the pool's keys over the defaults; verify follows the CA unless said") {
  backend_tls base;
  base.ca_cert = "/ca.pem";
  base.server_name = "cache";
  base.min_version = 4;  // tlsv1.3
  backend_tls own;
  own.enabled = true;
  own.chain_cert = "/c.pem";
  backend_tls t = merge_tls(base, own);
  CHECK(t.enabled);
  CHECK(t.ca_cert == "/ca.pem");
  CHECK(t.chain_cert == "/c.pem");
  CHECK(t.server_name == "cache");
  CHECK(t.version() == 3);
  CHECK(t.verify_peer());
  own.verify = tls_verify::Off;
  CHECK_FALSE(merge_tls(base, own).verify_peer());
  CHECK_FALSE(backend_tls{}.verify_peer());  // no CA, nothing said: no verification
  backend_tls on;
  on.verify = tls_verify::On;
  CHECK(on.verify_peer());  // the system's CAs
  CHECK(describe(backend_tls{}) == "off");
  CHECK(describe(t) == "on (verify, client certificate)");
}

TEST_CASE("a pool's tls: true takes router.tls; a map sets its own keys over it") {
  config c;
  const std::string router = std::string("router:\n  tls:\n    ca_cert: ") + kReadable +
                             "\n    server_name: cache.example\n    min_version: tlsv1.3\n";
  REQUIRE(tls_load(pool_yaml("    tls: true\n", router), &c) == "");
  REQUIRE(c.router.pools.size() == 1);
  backend_tls t = c.router.pools[0].tls;
  CHECK(t.enabled);
  CHECK(t.ca_cert == kReadable);
  CHECK(t.server_name == "cache.example");
  CHECK(t.version() == 3);
  CHECK(t.verify_peer());

  REQUIRE(
      tls_load(
          pool_yaml(
              "    tls:\n      verify: false\n      server_name: other\n      ciphers: ECDHE-ECDSA-AES128-GCM-SHA256\n",
              router),
          &c) == "");
  t = c.router.pools[0].tls;
  CHECK(t.enabled);
  CHECK(t.ca_cert == kReadable);
  CHECK(t.server_name == "other");
  CHECK(t.ciphers == "ECDHE-ECDSA-AES128-GCM-SHA256");
  CHECK_FALSE(t.verify_peer());

  REQUIRE(tls_load(pool_yaml("    tls:\n      enabled: false\n      server_name: x\n", router), &c) == "");
  CHECK_FALSE(c.router.pools[0].tls.enabled);
  REQUIRE(tls_load(pool_yaml("    tls: false\n", router), &c) == "");
  CHECK_FALSE(c.router.pools[0].tls.enabled);
  REQUIRE(tls_load(pool_yaml("", router), &c) == "");
  CHECK_FALSE(c.router.pools[0].tls.enabled);
}

TEST_CASE("bad pool tls settings, each at its line") {
  CHECK(tls_load(pool_yaml("    tls: sometimes\n")).starts_with("t.yaml:4: tls: expected true, false or a mapping"));
  CHECK(tls_load(pool_yaml("    tls:\n      verify: maybe\n")) ==
        "t.yaml:5: verify: expected true or false, got 'maybe'");
  CHECK(tls_load(pool_yaml("    tls:\n      min_version: 1.3\n")) ==
        "t.yaml:5: min_version: expected tlsv1.0, tlsv1.1, tlsv1.2 or tlsv1.3, got '1.3'");
  CHECK(tls_load(pool_yaml("    tls:\n      ca_certs: /x\n")).find("unknown key 'ca_certs'") != std::string::npos);
  CHECK(tls_load(pool_yaml("    tls:\n      key: /k.pem\n")).find("key is given without chain_cert") !=
        std::string::npos);
  const std::string missing = tls_load(pool_yaml("    tls:\n      ca_cert: /nonexistent/ca.pem\n"));
  CHECK(missing.find("pool 'main': tls: ca_cert /nonexistent/ca.pem: No such file or directory") != std::string::npos);
  CHECK(missing.starts_with("t.yaml:4:"));  // at the pool's tls:
  CHECK(tls_load(pool_yaml("    tls: true\n", "router:\n  tls:\n    ca_cert: /nonexistent/r.pem\n"))
            .find("ca_cert /nonexistent/r.pem") != std::string::npos);
}

TEST_CASE("mcrouter: use_ssl and security_mech tls turn TLS on; the --pem-* flags are router.tls") {
  config c;
  const std::string json = R"({"pools": {"A": {"servers": ["127.0.0.1:11211"], "use_ssl": true},
                                          "B": {"servers": ["127.0.0.1:11212"], "security_mech": "tls"},
                                          "C": {"servers": ["127.0.0.1:11213"], "use_ssl": false}},
                               "route": {"type": "AllSyncRoute", "children": ["PoolRoute|A", "PoolRoute|B", "PoolRoute|C"]}})";
  REQUIRE(tls_load(json, &c, "m.json") == "");
  for (const pool_config& p : c.router.pools) CHECK(p.tls.enabled == (p.name != "C"));
  CHECK(tls_load(R"({"pools": {"A": {"servers": ["127.0.0.1:1"], "use_ssl": "yes please"}}, "route": "PoolRoute|A"})",
                 nullptr, "m.json")
            .find("use_ssl must be true or false") != std::string::npos);

  cli_options cli;
  cli.pem_ca_path = kReadable;
  cli.pem_cert_path = kReadable;
  cli.pem_key_path = kReadable;
  apply_overrides(cli, c);
  for (const pool_config& p : c.router.pools) {
    if (p.name == "C") continue;
    CHECK(p.tls.ca_cert == kReadable);
    CHECK(p.tls.chain_cert == kReadable);
    CHECK(p.tls.key == kReadable);
    CHECK(p.tls.verify_peer());
  }
  CHECK(c.router.pools[2].tls == backend_tls{});
}

TEST_CASE("--pem-* flags parse as mcrouter spells them") {
  const char* argv[] = {"ithaca", "--pem-cert-path=/c.pem", "--pem-key-path", "/k.pem", "--pem-ca-path=/ca.pem"};
  cli_options o;
  std::string error;
  REQUIRE(parse_args(5, argv, o, &error));
  CHECK(*o.pem_cert_path == "/c.pem");
  CHECK(*o.pem_key_path == "/k.pem");
  CHECK(*o.pem_ca_path == "/ca.pem");
}

TEST_CASE("replication.tls: mutual, so all three files and verification") {
  config c;
  const std::string ok = std::string("replication:\n  role: master\n  tls:\n    chain_cert: ") + kReadable +
                         "\n    key: " + kReadable + "\n    ca_cert: " + kReadable + "\n";
  REQUIRE(tls_load(ok, &c) == "");
  CHECK(c.replication.tls.enabled);
  CHECK(c.replication.tls.verify_peer());
  CHECK(tls_load("replication:\n  role: master\n  tls:\n    ca_cert: /etc/hostname\n")
            .find("chain_cert, key and ca_cert are all needed") != std::string::npos);
  CHECK(tls_load(ok + "    verify: false\n").find("verify cannot be off") != std::string::npos);
  CHECK(tls_load("replication:\n  role: slave\n  master: 127.0.0.1\n  tls:\n    chain_cert: /nonexistent/c.pem\n"
                 "    ca_cert: /etc/hostname\n")
            .find("replication.tls: chain_cert /nonexistent/c.pem: No such file or directory") != std::string::npos);
  REQUIRE(tls_load("replication:\n  role: master\n  tls:\n    enabled: false\n", &c) == "");
  CHECK_FALSE(c.replication.tls.enabled);
}
