// The io_uring backend's extras beyond the backend interface: what the probe
// logs, and a counter the tests use to see that released states were freed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "backend.h"

namespace mm::detail {

// Which io_uring features the backend runs with, e.g. "DEFER_TASKRUN,
// multishot accept, multishot recv, buffer ring 256 x 16384 B". `b` must have
// been made by backend_uring_create(). [machine]
std::string backend_uring_features(const backend* b);

// What the backend did, for stats and tests. [machine]
struct backend_uring_stats {
  uint64_t recv_chunks = 0;     // multishot recv completions with data
  uint64_t recv_enobufs = 0;    // multishot recv ended because the ring ran dry
  uint64_t direct_recvs = 0;    // recv() calls made because there was no buffer
  uint64_t recv_arms = 0;       // multishot recv requests submitted
  uint64_t recv_pauses = 0;     // multishot recvs cancelled: unread chunks hit the cap
  uint64_t accepts_queued = 0;  // connections taken by multishot accept
  uint64_t polls_armed = 0;     // oneshot POLL_ADD requests submitted
  uint64_t sends_armed = 0;     // SEND requests submitted for io::write_batched
  uint64_t sends_short = 0;     // ... that sent part and were re-submitted for the rest
};
backend_uring_stats backend_uring_stats_get(const backend* b);

// For tests: behave as on a kernel without multishot accept / multishot recv
// (accept4 + POLL_ADD, recv + POLL_ADD), so CI covers those paths on any kernel.
void backend_uring_disable_multishot(backend* b, bool accept, bool recv);

// Released states the backend still holds because a completion may refer to
// them (freed when their last completion arrives, or with the backend).
size_t backend_uring_released_pending(const backend* b);

}  // namespace mm::detail
