// thread_name_flag.h: the %N flag's name lookup, its one-second cache, and
// what it shows for a thread it cannot read; machinarium_bridge.cc: the
// runtime's messages reach spdlog with their level.
#include <doctest/doctest.h>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>

#include "log.h"
#include "log_capture.h"
#include "machinarium.h"
#include "thread_name_flag.h"

namespace ithaca::log {

namespace {

size_t current_tid() { return static_cast<size_t>(::syscall(SYS_gettid)); }

// What the flag writes for a line of thread `tid` logged at `at`.
std::string formatted(thread_name_flag& flag, size_t tid, spdlog::log_clock::time_point at) {
  spdlog::details::log_msg msg("test", spdlog::level::info, "text");
  msg.thread_id = tid;
  msg.time = at;
  spdlog::memory_buf_t out;
  flag.format(msg, std::tm{}, out);
  return std::string(out.data(), out.size());
}

// A thread that names itself and waits until told to end.
class named_thread {
 public:
  explicit named_thread(const char* name) {
    std::promise<size_t> tid;
    auto tid_future = tid.get_future();
    thread_ = std::thread([this, name, tid = std::move(tid)]() mutable {
      ::pthread_setname_np(::pthread_self(), name);
      tid.set_value(current_tid());
      end_.get_future().wait();
    });
    tid_ = tid_future.get();
  }
  ~named_thread() { end(); }
  void end() {
    if (!thread_.joinable()) return;
    end_.set_value();
    thread_.join();
  }
  void rename(const char* name) { ::pthread_setname_np(thread_.native_handle(), name); }
  size_t tid() const { return tid_; }

 private:
  std::promise<void> end_;
  std::thread thread_;
  size_t tid_ = 0;
};

using std::chrono::milliseconds;

}  // namespace

TEST_CASE("thread_name reads a live thread's name, and gives the number of one that does not exist") {
  named_thread t("unit-named");
  CHECK(thread_name(t.tid()) == "unit-named");
  // Above any pid_max the kernel allows (4194304).
  CHECK(thread_name(999999999) == "999999999");
}

TEST_CASE("the flag keeps a name for a second, then reads it again") {
  named_thread t("first-name");
  thread_name_flag flag;
  const auto t0 = spdlog::log_clock::now();
  CHECK(formatted(flag, t.tid(), t0) == "first-name");
  t.rename("second-name");
  CHECK(formatted(flag, t.tid(), t0 + milliseconds(500)) == "first-name");
  CHECK(formatted(flag, t.tid(), t0 + milliseconds(1000)) == "first-name");
  CHECK(formatted(flag, t.tid(), t0 + milliseconds(1001)) == "second-name");
  // A clock that went back (the line's time is before the read) reads again.
  t.rename("third-name");
  CHECK(formatted(flag, t.tid(), t0) == "third-name");
}

TEST_CASE("a thread that has gone keeps the name read before; one never read shows its id") {
  thread_name_flag flag;
  const auto t0 = spdlog::log_clock::now();
  named_thread seen("seen-alive");
  const size_t seen_tid = seen.tid();
  CHECK(formatted(flag, seen_tid, t0) == "seen-alive");
  named_thread unseen("never-read");
  const size_t unseen_tid = unseen.tid();
  seen.end();
  unseen.end();
  // Past the refresh: the read fails now, and the name stays.
  CHECK(formatted(flag, seen_tid, t0 + milliseconds(2000)) == "seen-alive");
  CHECK(formatted(flag, unseen_tid, t0 + milliseconds(2000)) == std::to_string(unseen_tid));
}

TEST_CASE("a clone is a fresh flag with its own cache") {
  named_thread t("before-clone");
  thread_name_flag flag;
  const auto t0 = spdlog::log_clock::now();
  CHECK(formatted(flag, t.tid(), t0) == "before-clone");
  t.rename("after-clone");
  auto copy = flag.clone();
  auto* clone = dynamic_cast<thread_name_flag*>(copy.get());
  REQUIRE(clone != nullptr);
  CHECK(formatted(*clone, t.tid(), t0) == "after-clone");
  CHECK(formatted(flag, t.tid(), t0) == "before-clone");
}

TEST_CASE("install_machinarium_handler sends machinarium's messages to spdlog at their level") {
  test::captured_log log;
  install_machinarium_handler();
  mm::machine_config cfg;
  cfg.name = "bridge-probe";
  mm::machine* m = mm::machine_create(cfg, [] {
    mm::coroutine_create("thrower", [] { throw std::runtime_error("boom"); });
    mm::yield();
    mm::machine_stop(mm::machine_self());
  });
  REQUIRE(m != nullptr);
  mm::machine_join(m);
  mm::set_log_handler(nullptr);
  const auto started = log.with("machinarium: machine 'bridge-probe': ");
  REQUIRE(started.size() == 1);
  CHECK(started[0].starts_with("I "));
  const auto thrown = log.with("machinarium: coroutine 'thrower' ended by exception: boom");
  REQUIRE(thrown.size() == 1);
  CHECK(thrown[0].starts_with("E "));
}

}  // namespace ithaca::log
