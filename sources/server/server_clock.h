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
  // Server seconds tick on the wall clock's second boundaries: server time 0 is
  // set back to the start of the current unix second. So two servers on one
  // host (a master and its slave) agree on which second an absolute exptime
  // falls in; with a whole-second wall_base taken at an arbitrary moment, a
  // slave started 0.8 s into a second expired every replicated item up to
  // 0.8 s before its master did.
  server_clock() {
    timespec wall{};
    clock_gettime(CLOCK_REALTIME, &wall);
    start_ns_ = mm::now_ns() - static_cast<int64_t>(wall.tv_nsec);
    wall_base_ = static_cast<int64_t>(wall.tv_sec);
  }

  store::store_now now() const {
    return store::store_now{static_cast<uint64_t>((mm::now_ns() - start_ns_) / 1000000), wall_base_};
  }
  int64_t uptime_s() const { return (mm::now_ns() - start_ns_) / 1000000000; }
  int64_t wall_base() const { return wall_base_; }

 private:
  int64_t start_ns_ = 0;
  int64_t wall_base_ = 0;
};

}  // namespace ithaca::server
