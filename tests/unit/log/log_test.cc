// log.h: the asynchronous logger behind a bounded queue, its file, its level,
// the count of the lines it dropped, and what is left after shutdown().
#include <doctest/doctest.h>

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <spdlog/async_logger.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "log.h"
#include "log_capture.h"

namespace ithaca::log {

namespace {

using test::read_lines;
using test::scratch_dir;

logging_config to_file(const std::string& path, log_level level = log_level::Info) {
  logging_config c;
  c.file = path;
  c.level = level;
  return c;
}

// Names the calling thread for the test's duration (the main thread's name is
// the process's, so it is given back).
class thread_named {
 public:
  explicit thread_named(const char* name) {
    ::pthread_getname_np(::pthread_self(), before_, sizeof before_);
    ::pthread_setname_np(::pthread_self(), name);
  }
  ~thread_named() { ::pthread_setname_np(::pthread_self(), before_); }

 private:
  char before_[16] = {};
};

}  // namespace

TEST_CASE("init appends to the file, in kPattern's layout, with the name of the thread that logged") {
  scratch_dir dir;
  const std::string path = dir / "ithaca.log";
  { std::ofstream(path) << "an earlier run\n"; }
  std::string error;
  REQUIRE(init(to_file(path), &error));
  {
    // The name is read when the logging thread formats the line: it is kept
    // until shutdown() has written every queued line.
    thread_named name("log-unit-test");
    spdlog::info("hello {}", 42);
    spdlog::warn("careful");
    spdlog::debug("below the level");
    shutdown();
  }
  const auto lines = read_lines(path);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "an earlier run");
  const std::regex layout(R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} ([A-Z]) \[([^\]]*)\] (.*))");
  std::smatch m;
  REQUIRE(std::regex_match(lines[1], m, layout));
  CHECK(m[1] == "I");
  CHECK(m[2] == "log-unit-test");
  CHECK(m[3] == "hello 42");
  REQUIRE(std::regex_match(lines[2], m, layout));
  CHECK(m[1] == "W");
  CHECK(m[3] == "careful");
}

TEST_CASE("a file in a directory that does not exist is refused, and the running logger stays") {
  scratch_dir dir;
  test::captured_log running;
  const auto before = spdlog::default_logger();
  std::string error;
  CHECK_FALSE(init(to_file(dir / "missing/ithaca.log"), &error));
  CHECK(error ==
        "logging.file: '" + (dir / "missing/ithaca.log") + "': directory '" + (dir / "missing/") + "' does not exist");
  // Not created by the attempt (spdlog would have made it).
  CHECK_FALSE(std::filesystem::exists(dir / "missing"));
  // A regular file where the directory should be is no directory either.
  { std::ofstream(dir / "plain") << "x\n"; }
  CHECK_FALSE(init(to_file(dir / "plain/ithaca.log"), &error));
  CHECK(error.find("directory '" + (dir / "plain/") + "' does not exist") != std::string::npos);
  CHECK(spdlog::default_logger() == before);
  spdlog::warn("still here");
  CHECK(running.with("still here").size() == 1);
}

TEST_CASE("set_level changes what reaches the file while the logger runs") {
  scratch_dir dir;
  const std::string path = dir / "level.log";
  std::string error;
  REQUIRE(init(to_file(path, log_level::Warn), &error));
  spdlog::info("info at warn");
  set_level(log_level::Info);
  spdlog::info("info at info");
  set_level(log_level::Off);
  spdlog::error("error at off");
  set_level(log_level::Error);
  spdlog::warn("warn at error");
  spdlog::error("error at error");
  shutdown();
  std::string text;
  for (const std::string& l : read_lines(path)) text += l.substr(l.find("] ") + 2) + "|";
  CHECK(text == "info at info|error at error|");
}

TEST_CASE("a second init flushes the first file and replaces its logger") {
  scratch_dir dir;
  std::string error;
  REQUIRE(init(to_file(dir / "first.log"), &error));
  spdlog::info("to the first");
  REQUIRE(init(to_file(dir / "second.log"), &error));
  spdlog::info("to the second");
  shutdown();
  const auto first = read_lines(dir / "first.log");
  const auto second = read_lines(dir / "second.log");
  REQUIRE(first.size() == 1);
  CHECK(first[0].ends_with("to the first"));
  REQUIRE(second.size() == 1);
  CHECK(second[0].ends_with("to the second"));
}

TEST_CASE("after shutdown the default logger is synchronous and still logs") {
  scratch_dir dir;
  std::string error;
  REQUIRE(init(to_file(dir / "a.log"), &error));
  CHECK(dynamic_cast<spdlog::async_logger*>(spdlog::default_logger_raw()) != nullptr);
  shutdown();
  REQUIRE(spdlog::default_logger_raw() != nullptr);
  CHECK(dynamic_cast<spdlog::async_logger*>(spdlog::default_logger_raw()) == nullptr);
}

// The logging thread writes into a pipe nobody reads yet, so it blocks once
// the pipe and stdio's buffer are full: every line logged meanwhile beyond
// the queue's few slots pushes the oldest out. The caller never blocks, and
// each line is either written or counted in dropped().
TEST_CASE("a full queue drops the oldest lines, counts them, and never blocks the caller") {
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
  ::fcntl(p[1], F_SETPIPE_SZ, 4096);  // the smallest pipe (a page)
  logging_config c = to_file("/proc/self/fd/" + std::to_string(p[1]));
  c.async_queue = 4;
  const uint64_t before = dropped();
  std::string error;
  REQUIRE(init(c, &error));
  constexpr int kLines = 3000;
  const std::string filler(80, 'x');
  for (int i = 0; i < kLines; ++i) spdlog::info("line {} {}", i, filler);
  const uint64_t while_blocked = dropped() - before;
  // The reader starts only now: until here the logging thread could write
  // at most a pipe and a stdio buffer (some 100 lines).
  int read_lines_count = 0;
  std::thread reader([&] {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(p[0], buf, sizeof buf);
      if (n <= 0) break;
      for (ssize_t i = 0; i < n; ++i) read_lines_count += buf[i] == '\n';
    }
  });
  shutdown();  // writes what is queued (the reader drains), joins the logging thread
  ::close(p[1]);
  reader.join();
  ::close(p[0]);
  const uint64_t total = dropped() - before;
  CHECK(while_blocked >= kLines / 2);
  CHECK(total >= while_blocked);
  CHECK(read_lines_count <= kLines);
  // Periodic flushes are queue entries too: a dropped one counts without a line.
  CHECK(read_lines_count + total >= static_cast<uint64_t>(kLines));
  // The count survives the shutdown and a new logger.
  scratch_dir dir;
  REQUIRE(init(to_file(dir / "after.log"), &error));
  CHECK(dropped() - before >= total);
  shutdown();
  CHECK(dropped() - before >= total);
}

}  // namespace ithaca::log
