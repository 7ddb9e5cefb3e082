// auth_store.h: -Y's and -S's password tables, the SASL realm memcached's
// Cyrus SASL adds, and a SIGHUP's re-read that keeps what it cannot replace.
#include <doctest/doctest.h>

#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "auth_store.h"
#include "log_capture.h"
#include "machine_run.h"

namespace ithaca::server {

namespace {

using log::test::scratch_dir;

std::string host() {
  char name[1025] = {};
  REQUIRE(::gethostname(name, sizeof name - 1) == 0);
  return name;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("-Y: an entry with exactly this user and password") {
  scratch_dir dir;
  write(dir / "auth", "alice:secret\nbob:pw\n");
  config::server_config s;
  s.auth_file = dir / "auth";
  auth_store a;
  std::string error;
  std::vector<std::string> notes;
  REQUIRE(a.open(s, &error, &notes));
  CHECK(a.ascii_enabled());
  CHECK_FALSE(a.sasl_enabled());
  CHECK(a.check_ascii("alice", "secret"));
  CHECK(a.check_ascii("bob", "pw"));
  CHECK_FALSE(a.check_ascii("alice", "pw"));
  CHECK_FALSE(a.check_ascii("alice", "secre"));
  CHECK_FALSE(a.check_ascii("carol", "secret"));
}

TEST_CASE("an auth store opened with nothing checks nobody") {
  auth_store a;
  std::string error;
  REQUIRE(a.open(config::server_config{}, &error, nullptr));
  CHECK_FALSE(a.ascii_enabled());
  CHECK_FALSE(a.sasl_enabled());
  CHECK_FALSE(a.check_ascii("", ""));
  CHECK_FALSE(a.check_sasl("alice", "secret"));
}

TEST_CASE("-S: a user written with or without the host's realm matches a client with or without it") {
  scratch_dir dir;
  const std::string realm = host();
  write(dir / "pwdb", "carol@" + realm + ":pw1\ndave:pw2\neve@elsewhere:pw3\n");
  config::server_config s;
  s.sasl = true;
  s.sasl_pwdb = dir / "pwdb";
  auth_store a;
  std::string error;
  REQUIRE(a.open(s, &error, nullptr));
  CHECK(a.sasl_enabled());
  CHECK_FALSE(a.ascii_enabled());
  // Written with the realm: "carol" is given it, as Cyrus SASL gives it.
  CHECK(a.check_sasl("carol", "pw1"));
  CHECK(a.check_sasl("carol@" + realm, "pw1"));
  // Written without: "dave@HOST" is taken without it.
  CHECK(a.check_sasl("dave", "pw2"));
  CHECK(a.check_sasl("dave@" + realm, "pw2"));
  // Another realm is the user's own name, matched as written only.
  CHECK(a.check_sasl("eve@elsewhere", "pw3"));
  CHECK_FALSE(a.check_sasl("eve", "pw3"));
  CHECK_FALSE(a.check_sasl("dave@elsewhere", "pw2"));
  // Wrong passwords, and a password of another user.
  CHECK_FALSE(a.check_sasl("carol", "pw2"));
  CHECK_FALSE(a.check_sasl("dave", "pw1"));
  CHECK_FALSE(a.check_sasl("dave", ""));
}

TEST_CASE("a -Y file that cannot be read fails the open in memcached's words, and nothing is enabled") {
  scratch_dir dir;
  config::server_config s;
  s.auth_file = dir / "missing";
  auth_store a;
  std::string error;
  CHECK_FALSE(a.open(s, &error, nullptr));
  CHECK(error == "Could not open authfile [" + (dir / "missing") + "] for reading, error No such file or directory");
  CHECK_FALSE(a.ascii_enabled());
}

TEST_CASE("reload reads the files again; one that cannot be read keeps its running entries") {
  scratch_dir dir;
  write(dir / "auth", "alice:one\n");
  write(dir / "pwdb", "dave:one\n");
  config::server_config s;
  s.auth_file = dir / "auth";
  s.sasl = true;
  s.sasl_pwdb = dir / "pwdb";
  auth_store a;
  std::string error;
  REQUIRE(a.open(s, &error, nullptr));
  log::test::captured_log log;
  write(dir / "auth", "alice:two\n");
  write(dir / "pwdb", "dave:two\n");
  test::in_machine([&] { a.reload(5000, "SIGHUP"); });
  CHECK(a.check_ascii("alice", "two"));
  CHECK_FALSE(a.check_ascii("alice", "one"));
  CHECK(a.check_sasl("dave", "two"));
  CHECK(log.with("SIGHUP: auth file " + (dir / "auth") + " reloaded (1 entries)").size() == 1);
  // -Y's file gone, the pwdb changed: the first stays, the second is new.
  ::unlink((dir / "auth").c_str());
  write(dir / "pwdb", "dave:three\n");
  test::in_machine([&] { a.reload(5000, "SIGHUP"); });
  CHECK(a.check_ascii("alice", "two"));
  CHECK(a.check_sasl("dave", "three"));
  CHECK_FALSE(a.check_sasl("dave", "two"));
  const auto kept = log.with("; the running entries stay");
  REQUIRE(kept.size() == 1);
  CHECK(kept[0].starts_with("E SIGHUP: Could not open authfile"));
}

}  // namespace ithaca::server
