// The metrics machine: a small HTTP/1.1 listener of its own that serves
// GET /metrics (the Prometheus text format, metrics_page.h) and nothing else,
// off the workers: the page is gathered and written on this machine, which
// only reads counters (server_stats::collect takes its reset mutex briefly;
// the live settings' cell its own) and never waits on a worker.
//
// Bounded like the other listeners: at most `max_connections` clients at a
// time (the next one gets 503 and is closed), a request head of at most
// `max_head` bytes (431), the whole head within `read_timeout` from accept
// (a slowloris is closed, after a 408), each reply written within
// `write_timeout`. One request per connection (Connection: close).
#pragma once

#include <atomic>
#include <cstdint>
#include <future>
#include <string>
#include <vector>

#include "machinarium.h"
#include "server_stats.h"
#include "worker.h"

namespace ithaca::server {

struct metrics_listener_settings {
  std::string listen;              // "host:port"
  size_t max_connections = 16;     // clients at a time
  size_t max_head = 8192;          // request line + headers
  mm::millis read_timeout = 3000;  // the whole head, from accept
  mm::millis write_timeout = 5000;
};

class metrics_listener {
 public:
  // `workers` outlive this listener (it is stopped and joined before them).
  metrics_listener(metrics_listener_settings settings, server_stats& stats, std::vector<worker*> workers);
  // Starts the machine and binds; false (and logs) if either failed.
  bool start(const mm::machine_config& base);
  void stop();  // any thread
  void join();

  // Counters [metrics machine writes, any thread reads] (for tests and logs).
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> refused{0};  // over max_connections

 private:
  void main(std::promise<bool>* bound);
  void accept_loop(mm::io& listener);
  void serve(int fd);
  std::string page();

  metrics_listener_settings settings_;
  server_stats& stats_;
  std::vector<worker*> workers_;
  mm::machine* machine_ = nullptr;
  size_t active_ = 0;  // [metrics machine] connections being served
};

}  // namespace ithaca::server
