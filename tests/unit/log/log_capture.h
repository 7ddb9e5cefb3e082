// Shared by the log and server unit tests: a scratch directory, a file's lines,
// and a logger that keeps what it was given (to read back a log call).
#pragma once

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace ithaca::log::test {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it.
class scratch_dir {
 public:
  scratch_dir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/ithaca-log-test-XXXXXX";
    path_ = ::mkdtemp(tmpl.data()) != nullptr ? tmpl : std::string();
  }
  ~scratch_dir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(f, line);) lines.push_back(line);
  return lines;
}

// Makes a synchronous logger that keeps its last lines spdlog's default, with
// the layout "L message" (the level's letter), for the duration of a test.
class captured_log {
 public:
  explicit captured_log(spdlog::level::level_enum level = spdlog::level::trace)
      : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1024)), previous_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("test", sink_);
    logger->set_pattern("%L %v");
    logger->set_level(level);
    spdlog::set_default_logger(std::move(logger));
  }
  ~captured_log() { spdlog::set_default_logger(previous_); }
  captured_log(const captured_log&) = delete;
  captured_log& operator=(const captured_log&) = delete;

  std::vector<std::string> lines() const {
    std::vector<std::string> out = sink_->last_formatted();
    for (std::string& l : out) {
      while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
    }
    return out;
  }
  // The lines that contain `part`.
  std::vector<std::string> with(const std::string& part) const {
    std::vector<std::string> out;
    for (std::string& l : lines()) {
      if (l.find(part) != std::string::npos) out.push_back(std::move(l));
    }
    return out;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace ithaca::log::test
