// The server's notion of time for the store: monotonic milliseconds since
// start (machinarium's per-loop cached clock, so reading it is free) and the
// unix time at start, to convert absolute exptimes. Any thread.
#pragma once

#include <ctime>

#include "machinarium.h"
#include "store_time.h"

namespace ithaca::server {

class server_clock {
 public:
  server_clock() : start_ns_(mm::now_ns()), wall_base_(static_cast<int64_t>(std::time(nullptr))) {}

  store::store_now now() const {
    return store::store_now{static_cast<uint64_t>((mm::now_ns() - start_ns_) / 1000000), wall_base_};
  }
  int64_t uptime_s() const { return (mm::now_ns() - start_ns_) / 1000000000; }
  int64_t wall_base() const { return wall_base_; }

 private:
  int64_t start_ns_;
  int64_t wall_base_;
};

}  // namespace ithaca::server
