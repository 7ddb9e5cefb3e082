// The io_uring backend's extras beyond the backend interface: what the probe
// logs, and a counter the tests use to see that released states were freed.
#pragma once

#include <cstddef>
#include <string>

#include "backend.h"

namespace mm::detail {

// Which io_uring features the backend runs with, e.g. "DEFER_TASKRUN,
// multishot accept, multishot recv, buffer ring 256 x 16384 B". `b` must have
// been made by backend_uring_create(). [machine]
std::string backend_uring_features(const backend* b);

// Released states the backend still holds because a completion may refer to
// them (freed when their last completion arrives, or with the backend).
size_t backend_uring_released_pending(const backend* b);

}  // namespace mm::detail
