// pid_file.h: -P's file, written whole (never seen empty), over an old one,
// and removed.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "log_capture.h"
#include "pid_file.h"

namespace ithaca::server {

namespace {
using log::test::read_lines;
using log::test::scratch_dir;
}  // namespace

TEST_CASE("the pid file holds this process's pid and a newline, and no temporary file is left") {
  scratch_dir dir;
  log::test::captured_log log;
  const std::string path = dir / "ithaca.pid";
  REQUIRE(write_pid_file(path));
  std::ifstream f(path);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK(text == std::to_string(::getpid()) + "\n");
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
  CHECK(log.lines().empty());
  remove_pid_file(path);
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("an old file naming a running process is warned about and written over") {
  scratch_dir dir;
  log::test::captured_log log;
  const std::string path = dir / "ithaca.pid";
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  { std::ofstream(path) << child << "\n"; }
  REQUIRE(write_pid_file(path));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  CHECK(read_lines(path) == std::vector<std::string>{std::to_string(::getpid())});
  CHECK(log.with("WARNING: The pid file contained the following (running) pid: " + std::to_string(child)).size() == 1);
  // One naming a process that is gone is written over without a word.
  { std::ofstream(path) << child << "\n"; }
  REQUIRE(write_pid_file(path));
  CHECK(log.with("WARNING").size() == 1);
  // Nor is one that names no pid.
  { std::ofstream(path) << "garbage\n"; }
  REQUIRE(write_pid_file(path));
  CHECK(log.with("WARNING").size() == 1);
}

TEST_CASE("a pid file that cannot be written fails with memcached's words; a missing one logs its removal failure") {
  scratch_dir dir;
  log::test::captured_log log;
  CHECK_FALSE(write_pid_file(dir / "no/such/dir/ithaca.pid"));
  CHECK(log.with("E Could not open the pid file " + (dir / "no/such/dir/ithaca.pid.tmp") + " for writing: ").size() ==
        1);
  remove_pid_file(dir / "never-written.pid");
  CHECK(log.with("E Could not remove the pid file " + (dir / "never-written.pid")).size() == 1);
}

}  // namespace ithaca::server
