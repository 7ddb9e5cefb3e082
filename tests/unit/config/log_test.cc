#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "log.h"

using namespace ithaca;

namespace {

struct temp_path {
  temp_path() {
    char p[] = "/tmp/ithaca_log_test_XXXXXX";
    int fd = mkstemp(p);
    REQUIRE(fd >= 0);
    close(fd);
    path = p;
  }
  ~temp_path() { unlink(path.c_str()); }
  std::string read() const {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  size_t lines() const {
    std::string text = read();
    return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  }
  std::string path;
};

}  // namespace

TEST_CASE("lines reach the file with level and thread name; the level filters") {
  temp_path f;
  std::string error;
  REQUIRE(log::init({log::log_level::Info, f.path, 1024}, &error));
  spdlog::debug("hidden {}", 1);
  spdlog::info("hello {}", 42);
  log::shutdown();
  std::string text = f.read();
  CHECK(text.find("hidden") == std::string::npos);
  CHECK(text.find(" I [") != std::string::npos);
  CHECK(text.find("] hello 42\n") != std::string::npos);
}

TEST_CASE("%N is the name of the logging thread") {
  temp_path f;
  std::string error;
  REQUIRE(log::init({log::log_level::Info, f.path, 1024}, &error));
  bool seen = false;
  std::thread t([&] {
    pthread_setname_np(pthread_self(), "worker-7");
    spdlog::warn("from the worker");  // warn: flushed at once
    // Stay alive until the line is written, so its name can be looked up.
    for (int i = 0; i < 500 && !seen; ++i) {
      seen = f.read().find("from the worker") != std::string::npos;
      if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  t.join();
  log::shutdown();
  CHECK(seen);
  CHECK(f.read().find("W [worker-7] from the worker") != std::string::npos);
}

TEST_CASE("a full queue drops the oldest lines and counts them") {
  temp_path f;
  std::string error;
  uint64_t before = log::dropped();
  REQUIRE(log::init({log::log_level::Info, f.path, 16}, &error));
  constexpr size_t kLines = 20000;
  for (size_t i = 0; i < kLines; ++i) spdlog::info("line {}", i);
  log::shutdown();
  uint64_t dropped = log::dropped() - before;
  // Every line is either written or counted, never both, never neither.
  CHECK(f.lines() + dropped == kLines);
}

TEST_CASE("a file that cannot be opened is an error and logging goes on") {
  std::string error;
  CHECK_FALSE(log::init({log::log_level::Info, "/nonexistent-ithaca/dir/ithaca.log", 1024}, &error));
  CHECK(error ==
        "logging.file: '/nonexistent-ithaca/dir/ithaca.log': directory "
        "'/nonexistent-ithaca/dir/' does not exist");
  CHECK(access("/nonexistent-ithaca", F_OK) != 0);                       // nothing was created
  CHECK_FALSE(log::init({log::log_level::Info, "/tmp", 1024}, &error));  // a directory
  CHECK(error.rfind("logging.file: ", 0) == 0);
  spdlog::info("still works after a failed init");
}

TEST_CASE("logging after shutdown does not crash") {
  std::string error;
  temp_path f;
  REQUIRE(log::init({log::log_level::Info, f.path, 64}, &error));
  log::shutdown();
  spdlog::error("after shutdown (goes to stderr)");
  log::shutdown();
}
