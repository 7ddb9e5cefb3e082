// memcached's password files (config/auth_files.h) read as memcached 1.6.45
// reads them (authfile.c, sasl_defs.c), and the -Y / -S flags and keys.
#include <doctest/doctest.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "auth_files.h"
#include "cli.h"
#include "settings_stats.h"

using namespace ithaca::config;
using namespace std::string_literals;

namespace {

std::string parse(std::vector<const char*> args, cli_options* out = nullptr) {
  args.insert(args.begin(), "ithaca");
  cli_options o;
  std::string error;
  const bool ok = parse_args(static_cast<int>(args.size()), args.data(), o, &error);
  CHECK(ok == error.empty());
  if (out) *out = o;
  return error;
}

std::string setting(const config& c, const std::string& name) {
  for (const auto& kv : settings_stats(c)) {
    if (kv.first == name) return kv.second;
  }
  return "(missing)";
}

}  // namespace

TEST_CASE("-Y file: user:password lines, the password up to \\r or \\n") {
  ascii_auth_table t;
  std::vector<std::string> notes;
  REQUIRE(parse_ascii_auth("alice:secret\r\nbob:pw:with:colons\ncarol:\n:nouser\ndave:last", t, &notes));
  REQUIRE(t.entries.size() == 5);
  CHECK(t.check("alice", "secret"));
  CHECK(!t.check("alice", "secret\r"));
  CHECK(t.check("bob", "pw:with:colons"));
  CHECK(t.check("carol", ""));
  CHECK(t.check("", "nouser"));
  CHECK(t.check("dave", "last"));
  CHECK(!t.check("dave", "las"));
  CHECK(!t.check("eve", "secret"));
  CHECK(notes.empty());
  // An empty file: nobody gets in.
  REQUIRE(parse_ascii_auth("", t, nullptr));
  CHECK(t.entries.empty());
}

TEST_CASE("-Y file: a piece without a colon is malformed, an empty line too") {
  ascii_auth_table t;
  CHECK(!parse_ascii_auth("alice:secret\nnocolon\n", t, nullptr));
  CHECK(!parse_ascii_auth("alice:secret\n\n", t, nullptr));
  CHECK(!parse_ascii_auth("\n", t, nullptr));
  CHECK(!parse_ascii_auth("a\0:b\n"s, t, nullptr));
}

TEST_CASE("-Y file: eight entries, and a long line ends the file, each with a note") {
  std::string text;
  for (int i = 0; i < 10; ++i) text.append("u").append(std::to_string(i)).append(":p\n");
  ascii_auth_table t;
  std::vector<std::string> notes;
  REQUIRE(parse_ascii_auth(text, t, &notes));
  CHECK(t.entries.size() == 8);
  CHECK(t.check("u7", "p"));
  CHECK(!t.check("u8", "p"));
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("first 8 entries") != std::string::npos);
  // 300 bytes in one line: memcached's fgets takes 255; the password is cut
  // there and nothing after it is read.
  notes.clear();
  const std::string long_pass(300, 'x');
  REQUIRE(parse_ascii_auth("a:" + long_pass + "\nb:pw\n", t, &notes));
  REQUIRE(t.entries.size() == 1);
  CHECK(t.entries[0].password == std::string(253, 'x'));
  CHECK(!t.check("b", "pw"));
  CHECK(notes.size() == 1);
}

TEST_CASE("-Y file: memcached's words when it cannot be read") {
  ascii_auth_table t;
  std::string error;
  CHECK(!load_ascii_auth("/nonexistent/auth", t, &error, nullptr));
  CHECK(error == "Could not open authfile [/nonexistent/auth] for reading, error No such file or directory");
  char p[] = "/tmp/ithaca_auth_test_XXXXXX";
  const int fd = mkstemp(p);
  REQUIRE(fd >= 0);
  close(fd);
  std::ofstream(p) << "ok:1\nbroken\n";
  CHECK(!load_ascii_auth(p, t, &error, nullptr));
  CHECK(error == "Authfile ["s + p + "] has a malformed entry. Should be 'user:password'");
  unlink(p);
}

TEST_CASE("sasl pwdb: a password ends at ':', \\r, \\n or the line's end; no line is an error") {
  sasl_pwdb_table t;
  parse_sasl_pwdb("alice@host:secret\nbob:pw:extra\r\nnocolon\ncarol:\n", t);
  CHECK(t.check("alice@host", "secret"));
  CHECK(!t.check("alice", "secret"));
  CHECK(t.check("bob", "pw"));
  CHECK(t.check("bob", "pw:extra"));  // memcached compares the password's bytes, then its end
  CHECK(!t.check("bob", "p"));
  CHECK(t.check("carol", ""));
  CHECK(!t.check("nocolon", ""));
  CHECK(!t.check("dave", "x"));
  // memcached's bound: user and password over 252 bytes together never match.
  parse_sasl_pwdb("u:" + std::string(251, 'p') + "\n", t);
  CHECK(!t.check("u", std::string(252, 'p')));
  std::string error;
  CHECK(!load_sasl_pwdb("/nonexistent/pwdb", t, &error));
  CHECK(error.find("/nonexistent/pwdb") != std::string::npos);
}

TEST_CASE("-Y and -S: flags, keys, memcached's refusals beside UDP, and stats settings") {
  cli_options o;
  REQUIRE(parse({"-Y", "/etc/auth"}, &o) == "");
  REQUIRE(o.auth_file);
  CHECK(*o.auth_file == "/etc/auth");
  REQUIRE(parse({"--auth-file=/etc/a2", "-S"}, &o) != "");
  REQUIRE(parse({"-S"}, &o) == "");
  CHECK(o.sasl);
  CHECK(parse({"-S", "-U", "11211"}) == "ERROR: Cannot enable UDP while using binary SASL authentication.");
  CHECK(parse({"-U", "5", "-Y", "f"}) == "Cannot use UDP with ascii authentication enabled (-U 0 to disable)");
  CHECK(parse({"-S", "-U", "0"}) == "");
  CHECK(parse({"-S", "-Y", "f"}).find("-S and -Y") == 0);

  config c;
  o = {};
  REQUIRE(parse({"-Y", "/etc/auth"}, &o) == "");
  apply_overrides(o, c);
  CHECK(c.server.auth_file == "/etc/auth");
  validation_error v;
  CHECK(validate(c, &v));
  CHECK(setting(c, "auth_enabled_ascii") == "/etc/auth");
  CHECK(setting(c, "auth_enabled_sasl") == "no");
  CHECK(setting(c, "binding_protocol") == "ascii");

  // -S needs its password file: the environment's (main copies it) or the key.
  c = {};
  o = {};
  REQUIRE(parse({"-S"}, &o) == "");
  apply_overrides(o, c);
  CHECK(!validate(c, &v));
  CHECK(v.message.find("MEMCACHED_SASL_PWDB") != std::string::npos);
  o.sasl_pwdb = "/etc/pwdb";
  apply_overrides(o, c);
  CHECK(validate(c, &v));
  CHECK(c.server.sasl_pwdb == "/etc/pwdb");
  CHECK(setting(c, "auth_enabled_sasl") == "yes");
  CHECK(setting(c, "auth_enabled_ascii") == "no");
  CHECK(setting(c, "binding_protocol") == "binary");
  c.listen.udp_port = 11211;  // from the file
  CHECK(!validate(c, &v));
  CHECK(v.message == "ERROR: Cannot enable UDP while using binary SASL authentication.");
}
