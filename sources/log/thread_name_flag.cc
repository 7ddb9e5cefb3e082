#include "thread_name_flag.h"

#include <fstream>

namespace ithaca::log {

namespace {
constexpr auto kRefresh = std::chrono::seconds(1);
constexpr size_t kMaxCached = 4096;  // bounds the map if thread ids churn
}  // namespace

namespace {
// The name in /proc, or "" if it cannot be read (a full descriptor table,
// or the thread is gone).
std::string read_thread_name(size_t tid) {
  std::ifstream comm("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::string name;
  if (comm && std::getline(comm, name)) return name;
  return {};
}
}  // namespace

std::string thread_name(size_t tid) {
  std::string name = read_thread_name(tid);
  return name.empty() ? std::to_string(tid) : name;
}

void thread_name_flag::format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) {
  auto it = names_.find(msg.thread_id);
  if (it == names_.end() || msg.time - it->second.read_at > kRefresh || msg.time < it->second.read_at) {
    std::string name = read_thread_name(msg.thread_id);
    // A failed read keeps the name read before rather than turning it into a number.
    if (name.empty()) name = it != names_.end() ? it->second.name : std::to_string(msg.thread_id);
    if (names_.size() >= kMaxCached) names_.clear();
    it = names_.insert_or_assign(msg.thread_id, cached{std::move(name), msg.time}).first;
  }
  dest.append(it->second.name.data(), it->second.name.data() + it->second.name.size());
}

std::unique_ptr<spdlog::custom_flag_formatter> thread_name_flag::clone() const {
  return std::make_unique<thread_name_flag>();
}

}  // namespace ithaca::log
