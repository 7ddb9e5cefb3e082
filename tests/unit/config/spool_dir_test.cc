// The reliable deletes' spool directory (config/spool_dir.h): its default,
// the side-effect-free check (--check-config, a reload) and the start's
// mkdir -p with its proof by a probe file. A read-only mount is covered over
// the wire (tests/functional/test_reliable_deletes.py): it needs root.
#include <doctest/doctest.h>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "spool_dir.h"

using namespace ithaca::config;

namespace {

struct temp_dir {
  std::filesystem::path path;
  temp_dir() {
    char tmpl[] = "/tmp/ithaca-spool-dir-test-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~temp_dir() { std::filesystem::remove_all(path); }
};

// Sets (or unsets, with null) an environment variable for one scope.
struct scoped_env {
  std::string name;
  std::string old;
  bool had = false;
  scoped_env(const char* n, const char* value) : name(n) {
    if (const char* o = std::getenv(n)) {
      had = true;
      old = o;
    }
    if (value != nullptr) {
      ::setenv(n, value, 1);
    } else {
      ::unsetenv(n);
    }
  }
  ~scoped_env() {
    if (had) {
      ::setenv(name.c_str(), old.c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
};

}  // namespace

TEST_CASE("spool dir: named, under systemd's state directory, else by port or pid") {
  config c;
  CHECK_FALSE(uses_spool(c));
  c.router.pools.emplace_back();
  CHECK(uses_spool(c));
  {
    scoped_env state("STATE_DIRECTORY", "/var/lib/ithaca:/var/lib/other");
    CHECK(spool_dir_of(c) == "/var/lib/ithaca/spool");
    c.router.spool_dir = "/srv/spool";
    CHECK(spool_dir_of(c) == "/srv/spool");  // a named one wins
    c.router.spool_dir.clear();
  }
  scoped_env state("STATE_DIRECTORY", nullptr);
  scoped_env tmp("TMPDIR", "/scratch");
  c.listen.tcp = {tcp_address{"127.0.0.1", 11311}};
  CHECK(spool_dir_of(c) == "/scratch/ithaca-spool-11311");
  c.listen.tcp = {tcp_address{"127.0.0.1", 0}};
  CHECK(spool_dir_of(c) == "/scratch/ithaca-spool-pid-" + std::to_string(::getpid()));
}

TEST_CASE("spool dir: the check looks and makes nothing") {
  temp_dir d;
  CHECK(spool_dir_problem(d.path.string()).empty());
  const auto nested = d.path / "a" / "b" / "spool";
  CHECK(spool_dir_problem(nested.string()).empty());  // can be made
  CHECK_FALSE(std::filesystem::exists(d.path / "a"));
  const auto file = d.path / "file";
  std::ofstream(file) << "x\n";
  CHECK(spool_dir_problem(file.string()) == file.string() + ": is not a directory");
  const auto under = file / "spool";
  CHECK(spool_dir_problem(under.string()) == under.string() + ": " + file.string() + " is not a directory");
  CHECK(spool_dir_problem("") == "an empty path");
}

TEST_CASE("spool dir: the start makes it, parents too, and proves it writable") {
  temp_dir d;
  const auto nested = d.path / "a" / "b" / "spool";
  std::string why;
  bool made = false;
  CHECK(make_spool_dir(nested.string(), &why, &made));
  CHECK(made);
  CHECK(std::filesystem::is_directory(nested));
  CHECK(std::filesystem::is_empty(nested));  // the probe file is gone
  CHECK(make_spool_dir(nested.string(), &why, &made));
  CHECK_FALSE(made);  // it was there
  const auto file = d.path / "file";
  std::ofstream(file) << "x\n";
  CHECK_FALSE(make_spool_dir(file.string(), &why));
  CHECK(why == file.string() + ": is not a directory");
  CHECK_FALSE(make_spool_dir((file / "spool").string(), &why));
  CHECK(why.find("is not a directory") != std::string::npos);
}
