// TLS settings: memcached's -Z / -o ssl_* / -l notls:, the YAML `tls:`
// section, the rules validate() checks and `stats settings`.
#include <doctest/doctest.h>

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "cli.h"
#include "load.h"
#include "restart_only.h"
#include "settings_stats.h"

using namespace ithaca::config;

namespace {

std::string tls_parse(std::initializer_list<const char*> args, cli_options* out = nullptr) {
  std::vector<const char*> argv{"ithaca"};
  argv.insert(argv.end(), args.begin(), args.end());
  cli_options o;
  std::string error;
  const bool ok = parse_args(static_cast<int>(argv.size()), argv.data(), o, &error);
  CHECK(ok == error.empty());
  if (out) *out = o;
  return error;
}

config tls_with_flags(std::initializer_list<const char*> args) {
  cli_options o;
  REQUIRE(tls_parse(args, &o) == "");
  config c;
  apply_overrides(o, c);
  return c;
}

std::string validation(const config& c) {
  validation_error e;
  return validate(c, &e) ? "" : e.message;
}

std::string tls_setting(const config& c, const std::string& name) {
  for (const auto& [k, v] : settings_stats(c)) {
    if (k == name) return v;
  }
  return "<absent>";
}

}  // namespace

TEST_CASE("-Z and -o ssl_*: memcached's names and values") {
  config c = tls_with_flags({"-Z", "-o",
                             "ssl_chain_cert=/c.pem,ssl_key=/k.pem,ssl_ca_cert=/ca.pem,ssl_verify_mode=2,"
                             "ssl_min_version=3,ssl_ciphers=HIGH,ssl_keyformat=2,ssl_wbuf_size=32,ssl_session_cache"});
  CHECK(c.tls.enabled);
  CHECK(c.tls.chain_cert == "/c.pem");
  CHECK(c.tls.key == "/k.pem");
  CHECK(c.tls.ca_cert == "/ca.pem");
  CHECK(c.tls.verify_mode == 2);
  CHECK(c.tls.min_version == 3);
  CHECK(c.tls.ciphers == "HIGH");
  CHECK(c.tls.keyformat == kKeyformatAsn1);
  CHECK(c.tls.wbuf_size == 32 * 1024);
  CHECK(c.tls.session_cache);
  CHECK(validation(c) == "");
  // Long forms, -o repeated, and the names ithaca also takes for min_version.
  c = tls_with_flags({"--enable-ssl", "--extended=ssl_chain_cert=/a.pem", "-o", "ssl_min_version=tlsv1.3"});
  CHECK(c.tls.enabled);
  CHECK(c.tls.chain_cert == "/a.pem");
  CHECK(c.tls.min_version == 3);
}

TEST_CASE("memcached's defaults: verify none, tlsv1.2, PEM, 16 KiB writes; off without -Z") {
  config c;
  CHECK_FALSE(c.tls.enabled);
  CHECK(c.tls.verify_mode == 0);
  CHECK(c.tls.min_version == 2);
  CHECK(c.tls.keyformat == kKeyformatPem);
  CHECK(c.tls.wbuf_size == 16 * 1024);
  CHECK(tls_setting(c, "ssl_enabled") == "no");
  CHECK(tls_setting(c, "ssl_chain_cert") == "(null)");
  CHECK(tls_setting(c, "ssl_ca_cert") == "NULL");
  CHECK(tls_setting(c, "ssl_min_version") == "tlsv1.2");
  CHECK(tls_setting(c, "ssl_verify_mode") == "0");
  CHECK(tls_setting(c, "ssl_wbuf_size") == "16384");
}

TEST_CASE("bad -o ssl_* values: memcached's messages") {
  CHECK(tls_parse({"-o", "ssl_verify_mode=4"}) == "-o: Invalid ssl_verify_mode. Use help to see valid options.");
  CHECK(tls_parse({"-o", "ssl_verify_mode=x"}) == "-o: could not parse argument to ssl_verify_mode");
  CHECK(tls_parse({"-o", "ssl_min_version=9"}) == "-o: Invalid ssl_min_version. Use help to see valid options.");
  CHECK(tls_parse({"-o", "ssl_min_version=tls9"}) == "-o: could not parse argument to ssl_min_version");
  CHECK(tls_parse({"-o", "ssl_chain_cert"}) == "-o: Missing ssl_chain_cert argument");
  CHECK(tls_parse({"-o", "ssl_key"}) == "-o: Missing ssl_key argument");
  CHECK(tls_parse({"-o", "ssl_keyformat=3"}).rfind("-o: ssl_keyformat: ", 0) == 0);
  CHECK(tls_parse({"-o", "ssl_wbuf_size=0"}) == "-o: could not parse argument to ssl_wbuf_size");
  // The TLS options mix with the others; an unknown one is named.
  CHECK(tls_parse({"-o", "ssl_chain_cert=/c,modern"}) == "");
  CHECK(tls_parse({"-o", "ssl_chain_cert=/c,moder"}) == "-o: Illegal suboption \"moder\"");
}

TEST_CASE("stats settings prints the verify mode as OpenSSL's flags, as memcached does") {
  for (auto [mode, flags] : {std::pair{"0", "0"}, {"1", "1"}, {"2", "3"}, {"3", "7"}}) {
    std::string o = std::string("ssl_verify_mode=") + mode;
    config c = tls_with_flags({"-o", o.c_str()});
    CHECK(tls_setting(c, "ssl_verify_mode") == flags);
  }
}

TEST_CASE("-l notls:HOST:PORT: a plaintext listener, valid only with -Z") {
  config c = tls_with_flags(
      {"-Z", "-o", "ssl_chain_cert=/c.pem", "-l", "127.0.0.1:5000,notls:127.0.0.1:5001", "-l", "notls:[::1]"});
  REQUIRE(c.listen.tcp.size() == 3);
  CHECK_FALSE(c.listen.tcp[0].notls);
  CHECK(c.listen.tcp[1].notls);
  CHECK(c.listen.tcp[1].port == 5001);
  CHECK(c.listen.tcp[2].notls);
  CHECK(c.listen.tcp[2].host == "::1");
  CHECK(c.listen.tcp[2].port == kDefaultPort);
  CHECK(validation(c) == "");
  c = tls_with_flags({"-l", "notls:127.0.0.1:5001"});
  CHECK(validation(c) == "'notls' option is valid only when SSL is enabled");
}

TEST_CASE("-l btls: and mtls: listeners (memcached 1.6's): TLS with no client certificate asked, or one required") {
  config c = tls_with_flags({"-Z", "-o", "ssl_chain_cert=/c.pem,ssl_ca_cert=/ca.pem", "-l",
                             "btls:127.0.0.1:5000,mtls:[::1]:5001,127.0.0.1:5002"});
  REQUIRE(c.listen.tcp.size() == 3);
  CHECK(c.listen.tcp[0].peer == peer_check::None);
  CHECK(c.listen.tcp[0].port == 5000);
  CHECK(c.listen.tcp[1].peer == peer_check::Required);
  CHECK(c.listen.tcp[1].host == "::1");
  CHECK(c.listen.tcp[1].port == 5001);
  CHECK(c.listen.tcp[2].peer == peer_check::Default);
  CHECK_FALSE(c.listen.tcp[0].notls);
  CHECK(validation(c) == "");
  c = tls_with_flags({"-l", "btls:127.0.0.1:5000"});
  CHECK(validation(c) == "'btls' option is valid only when SSL is enabled");
  c = tls_with_flags({"-l", "mtls:127.0.0.1:5000"});
  CHECK(validation(c) == "'mtls' option is valid only when SSL is enabled");
  // An mtls: listener needs the CA its clients' certificates are checked against.
  c = tls_with_flags({"-Z", "-o", "ssl_chain_cert=/c.pem", "-l", "mtls:127.0.0.1:5000"});
  CHECK(validation(c).find("ssl_ca_cert") != std::string::npos);
  std::string error;
  config y;
  REQUIRE(
      load_config_text("listen:\n  tcp: [\"mtls:127.0.0.1:1\", \"btls:127.0.0.1:2\"]\n"
                       "tls:\n  enabled: true\n  chain_cert: /c.pem\n  ca_cert: /ca.pem\n",
                       "ithaca.yaml", y, &error));
  CHECK(error == "");
  CHECK(y.listen.tcp[0].peer == peer_check::Required);
  CHECK(y.listen.tcp[1].peer == peer_check::None);
}

TEST_CASE("validate: a certificate and a TCP listener are needed") {
  config c = tls_with_flags({"-Z"});
  CHECK(validation(c).find("ssl_chain_cert") != std::string::npos);
  c = tls_with_flags({"-Z", "-o", "ssl_chain_cert=/c.pem", "-s", "/tmp/x.sock"});
  CHECK(validation(c) == "ERROR: You cannot enable SSL without a TCP port.");
}

TEST_CASE("YAML tls: section and notls: in listen.tcp") {
  config c;
  std::string error;
  REQUIRE(
      load_config_text("listen:\n  tcp: [\"127.0.0.1:1\", \"notls:127.0.0.1:2\"]\n"
                       "tls:\n  enabled: true\n  chain_cert: /c.pem\n  key: /k.pem\n  ca_cert: /ca.pem\n"
                       "  verify_mode: 3\n  min_version: tlsv1.3\n  ciphers: HIGH\n  keyformat: der\n"
                       "  wbuf_size: 8k\n  session_cache: true\n  kernel_tls: false\n",
                       "ithaca.yaml", c, &error));
  CHECK(error == "");
  CHECK(c.tls.enabled);
  CHECK(c.tls.chain_cert == "/c.pem");
  CHECK(c.tls.key == "/k.pem");
  CHECK(c.tls.ca_cert == "/ca.pem");
  CHECK(c.tls.verify_mode == 3);
  CHECK(c.tls.min_version == 3);
  CHECK(c.tls.ciphers == "HIGH");
  CHECK(c.tls.keyformat == kKeyformatAsn1);
  CHECK(c.tls.wbuf_size == 8192);
  CHECK(c.tls.session_cache);
  CHECK_FALSE(c.tls.kernel_tls);
  REQUIRE(c.listen.tcp.size() == 2);
  CHECK(c.listen.tcp[1].notls);
  // Flags win over the file, field by field.
  cli_options o;
  REQUIRE(tls_parse({"-o", "ssl_verify_mode=1"}, &o) == "");
  apply_overrides(o, c);
  CHECK(c.tls.verify_mode == 1);
  CHECK(c.tls.chain_cert == "/c.pem");

  config bad;
  CHECK_FALSE(load_config_text("tls:\n  min_version: tlsv2\n", "ithaca.yaml", bad, &error));
  CHECK(error.find("min_version") != std::string::npos);
  CHECK_FALSE(load_config_text("tls:\n  verify_mode: 4\n", "ithaca.yaml", bad, &error));
  CHECK(error.find("verify_mode") != std::string::npos);
  CHECK_FALSE(load_config_text("tls:\n  chain_certs: /c.pem\n", "ithaca.yaml", bad, &error));
  CHECK(error.find("chain_certs") != std::string::npos);
}

TEST_CASE("tls settings need a restart (a SIGHUP re-reads the same files)") {
  config a;
  config b;
  b.tls.enabled = true;
  auto changes = restart_only_changes(a, b);
  CHECK(std::find(changes.begin(), changes.end(), "tls") != changes.end());
}
