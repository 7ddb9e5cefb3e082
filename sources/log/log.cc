#include "log.h"

#include <spdlog/async.h>
#include <spdlog/async_logger.h>
#include <spdlog/details/thread_pool.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <sys/stat.h>

#include <atomic>
#include <memory>

#include "thread_name_flag.h"

namespace ithaca::log {

namespace {

// Owned by the main thread (init/shutdown); the async logger keeps only a
// weak pointer to its pool, so the pool must live here.
std::shared_ptr<spdlog::details::thread_pool> g_pool;
size_t g_queue_lines = 0;  // the pool's queue, in lines [main thread]
// Lines dropped by the pools of earlier init() calls.
std::atomic<uint64_t> g_dropped_before{0};

spdlog::level::level_enum to_spdlog(log_level l) {
  switch (l) {
    case log_level::Trace: return spdlog::level::trace;
    case log_level::Debug: return spdlog::level::debug;
    case log_level::Info: return spdlog::level::info;
    case log_level::Warn: return spdlog::level::warn;
    case log_level::Error: return spdlog::level::err;
    case log_level::Off: return spdlog::level::off;
  }
  return spdlog::level::info;
}

std::unique_ptr<spdlog::formatter> make_formatter() {
  auto f = std::make_unique<spdlog::pattern_formatter>();
  f->add_flag<thread_name_flag>('N').set_pattern(kPattern);
  return f;
}

// Used before init() and after shutdown(): synchronous, to stderr.
std::shared_ptr<spdlog::logger> make_sync_stderr_logger() {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("ithaca", sink);
  logger->set_formatter(make_formatter());
  return logger;
}

// Flushes and lets go of the current async logger and its thread. The pool's
// destructor writes what is still queued, then joins its thread.
void release_async() {
  if (auto current = spdlog::default_logger()) current->flush();
  // The flush was the last line enqueued, so the counter is final now.
  if (g_pool) g_dropped_before += g_pool->overrun_counter();
  spdlog::set_default_logger(make_sync_stderr_logger());
  g_pool.reset();
}

}  // namespace

bool init(const logging_config& c, std::string* error) {
  spdlog::sink_ptr sink;
  if (!c.file.empty()) {
    // spdlog would create missing directories; a typo in the path should be
    // an error instead.
    std::string dir = c.file.substr(0, c.file.find_last_of('/') + 1);
    struct stat st {};
    if (!dir.empty() && (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))) {
      if (error) *error = "logging.file: '" + c.file + "': directory '" + dir + "' does not exist";
      return false;
    }
  }
  try {
    if (c.file.empty()) {
      sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    } else {
      sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(c.file, /*truncate=*/false);
    }
  } catch (const spdlog::spdlog_ex& e) {
    if (error) *error = "logging.file: " + std::string(e.what());
    return false;
  }
  release_async();
  size_t queue = c.async_queue == 0 ? 1 : c.async_queue;
  g_queue_lines = queue;
  g_pool = std::make_shared<spdlog::details::thread_pool>(queue, 1);
  auto logger = std::make_shared<spdlog::async_logger>("ithaca", std::move(sink), g_pool,
                                                       spdlog::async_overflow_policy::overrun_oldest);
  logger->set_formatter(make_formatter());
  logger->set_level(to_spdlog(c.level));
  // Problems reach the file at once; the rest within a second (flush_every).
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
  spdlog::flush_every(std::chrono::seconds(1));
  return true;
}

void set_level(log_level level) { spdlog::set_level(to_spdlog(level)); }

uint64_t queue_bytes() { return uint64_t{g_queue_lines} * sizeof(spdlog::details::async_msg); }

uint64_t dropped() {
  // g_pool changes only in init()/shutdown(), which do not run while other
  // threads work, so reading it here is safe.
  return g_dropped_before + (g_pool ? g_pool->overrun_counter() : 0);
}

void shutdown() { release_async(); }

}  // namespace ithaca::log
