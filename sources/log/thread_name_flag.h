// spdlog pattern flag %N: the name of the thread that logged the line.
//
// spdlog records only the thread id, and formats on the logging thread, so
// the name is looked up there: from /proc/self/task/TID/comm (what
// pthread_setname_np sets), cached per thread id for a second so a renamed
// thread or a reused id is picked up soon without a file read per line.
// A thread whose name was never read (it exited before its first line was
// written, or the descriptor table was full) shows its id.
#pragma once

#include <spdlog/pattern_formatter.h>

#include <chrono>
#include <string>
#include <unordered_map>

namespace ithaca::log {

class thread_name_flag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm& tm, spdlog::memory_buf_t& dest) override;
  std::unique_ptr<spdlog::custom_flag_formatter> clone() const override;

 private:
  struct cached {
    std::string name;
    spdlog::log_clock::time_point read_at;
  };
  // Used only by the thread that formats (under the sink's mutex).
  std::unordered_map<size_t, cached> names_;
};

// The name of thread `tid` of this process, or its number if unknown.
std::string thread_name(size_t tid);

}  // namespace ithaca::log
