// Per-fd state of an attached socket: owned by one machine, touched only on
// that machine's thread (the backend's completions are dispatched there too).
#pragma once

#include <cstdint>
#include <deque>

#include "machinarium.h"

namespace mm::detail {

class backend;

// A chunk of received bytes sitting in a backend-owned buffer (io_uring
// provided-buffer ring). `offset` bytes of it were already handed out.
struct rx_chunk {
  char* data = nullptr;
  uint32_t length = 0;
  uint32_t offset = 0;
  uint16_t buffer_id = 0;
};

struct io_state {
  int fd = -1;
  backend* owner = nullptr;

  // Readiness as last reported by the backend (edge style): set when the
  // backend says the fd may be ready, cleared when a syscall says EAGAIN.
  bool readable = false;
  bool writable = false;

  // The coroutine waiting for input (read, accept, recvmsg) and for output.
  call* read_waiter = nullptr;
  call* write_waiter = nullptr;

  // io_uring only: multishot receive into provided buffers.
  bool recv_armed = false;
  std::deque<rx_chunk> rx;      // received, not yet read by the coroutine
  int rx_end = 0;               // 0, or 1 for end of stream, or -errno; sticky
  // io_uring only: multishot accept.
  bool accept_armed = false;
  std::deque<int> accepted;     // accepted fds not yet taken
  int accept_error = 0;
  // io_uring only: a readiness poll is armed for these events.
  uint32_t poll_armed = 0;

  // Backend requests that may still complete with this state's address.
  int inflight = 0;
  call* drain_waiter = nullptr;  // woken when inflight drops to 0 (detach)
  bool released = false;         // the io layer gave it up; the backend frees it
};

// Called by a backend, on the owning machine, when `s` may be ready for
// `events` (EPOLLIN / EPOLLOUT / EPOLLERR / EPOLLHUP bits) or when a
// completion was queued on it. Wakes the matching waiters. Defined in io.cc.
void io_state_ready(io_state* s, uint32_t events);
// Called by a backend when s->inflight dropped to zero.
void io_state_drained(io_state* s);

}  // namespace mm::detail
