// ithaca's logging: spdlog's asynchronous logger behind a bounded queue.
//
// Callers log with spdlog's free functions (spdlog::info(...)), which go to the
// default logger that init() installs. A log call formats the line on the
// calling thread and enqueues it; one logging thread writes it. When the queue
// is full the oldest queued line is dropped and counted (dropped()), so a
// worker never blocks on a log write, whatever the disk does.
#pragma once

#include <cstdint>
#include <string>

#include "log_config.h"

namespace ithaca::log {

// The line layout: "2024-05-01 12:00:00.123 W [worker-2] message".
// %N is the name of the thread that logged (see thread_name_flag.h).
inline constexpr const char* kPattern = "%Y-%m-%d %H:%M:%S.%e %L [%N] %v";

// Starts the logging thread and makes its logger spdlog's default. Appends to
// `file` (created if missing), or writes to stderr when it is "". Calling it
// again replaces the previous logger (after flushing it). False with *error
// if the file cannot be opened; the previous logging stays in place then.
// [main thread, before machines start or after they stopped]
bool init(const logging_config& c, std::string* error);

// Sets the default logger's level (a SIGHUP reload). spdlog's level is an
// atomic, so threads logging meanwhile see the old or the new one. [any thread]
void set_level(log_level level);

// Lines dropped because the queue was full, since the process started (it
// survives shutdown() and a second init()). [any thread, but not while
// init() or shutdown() runs]
uint64_t dropped();

// Bytes of the queue init() allocated (its lines are constructed up front, so all of it is
// resident): the store counts them against the memory limit. [main thread, after init()]
uint64_t queue_bytes();

// Writes every queued line, stops the logging thread and leaves a synchronous
// stderr logger as the default, so a late log call still works. No other
// thread may be logging concurrently. [main thread, after machines stopped]
void shutdown();

// Sends machinarium's messages to the current default logger. Separate from
// init() so that programs without machinarium do not link it. [main thread,
// before machines start]
void install_machinarium_handler();

}  // namespace ithaca::log
