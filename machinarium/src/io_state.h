// Per-fd state of an attached socket: owned by one machine, touched only on
// that machine's thread (the backend's completions are dispatched there too).
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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

// A FIFO that allocates nothing until the first push (std::deque allocates a
// map and a 512-byte node on construction, per socket, idle or not) and keeps
// its capacity once used, so a busy socket stops allocating.
template <typename T>
class fifo {
 public:
  bool empty() const { return head_ == items_.size(); }
  size_t size() const { return items_.size() - head_; }
  T& front() { return items_[head_]; }
  void push_back(const T& v) {
    // A FIFO that never runs empty (a steady stream) compacts instead of
    // growing: amortised O(1), since at least half the slots are dead.
    if (head_ >= 16 && head_ * 2 >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    items_.push_back(v);
  }
  void pop_front() {
    if (++head_ == items_.size()) clear();
  }
  void clear() {
    items_.clear();
    head_ = 0;
  }
  auto begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  auto end() const { return items_.end(); }

 private:
  std::vector<T> items_;
  size_t head_ = 0;
};

// io_uring only: the bytes of io::write_batched(), owned here rather than by
// the caller, so a SEND in flight never reads memory its caller has freed (a
// timeout or a cancel returns before the completion; a closed io's state
// lives until every completion arrived). One SEND in flight at a time, on
// `wire` from `offset`; what is queued meanwhile waits in `next`.
struct send_queue {
  std::string wire;
  size_t offset = 0;
  std::string next;
  bool armed = false;   // a SEND is in flight (counted in io_state::inflight)
  uint64_t queued = 0;  // bytes ever queued
  uint64_t sent = 0;    // bytes ever confirmed by a completion
  int error = 0;        // first failure, -errno; sticky (the rest is dropped)
  bool pending() const { return sent < queued && error == 0; }
};

struct io_state {
  int fd = -1;
  backend* owner = nullptr;
  // A stream socket (TCP, unix stream), set by the backend's attach(): a
  // short read from one means its queue was empty at that moment, so the
  // next read waits for the edge instead of paying for an EAGAIN.
  bool stream = false;

  // Readiness as last reported by the backend (edge style): set when the
  // backend says the fd may be ready, cleared when a syscall says EAGAIN.
  bool readable = false;
  bool writable = false;

  // The coroutine waiting for input (read, accept, recvmsg) and for output.
  call* read_waiter = nullptr;
  call* write_waiter = nullptr;

  // io_uring only: multishot receive into provided buffers.
  bool recv_armed = false;
  bool recv_paused = false;  // we cancelled it: rx reached its cap
  fifo<rx_chunk> rx;         // received, not yet read by the coroutine
  int rx_end = 0;            // 0, or 1 for end of stream, or -errno; sticky
  // io_uring only: multishot accept.
  bool accept_armed = false;
  // backend::stop_accept asked the kernel to cancel it: its final
  // completion wakes the read waiter (io::stop_accepting) and no re-arm
  // follows unless accept() is called again.
  bool accept_stopping = false;
  fifo<int> accepted;  // accepted fds not yet taken
  int accept_error = 0;
  // io_uring only: a readiness poll is armed for these events.
  uint32_t poll_armed = 0;

  // Parked (park_set): no coroutine waits for input; when the backend says
  // input, end of stream or an error may be there, io_state_ready calls
  // on_input(on_input_arg) once (from the scheduler, outside any coroutine)
  // and clears it.
  void (*on_input)(void*) = nullptr;
  void* on_input_arg = nullptr;
  // io_uring only: io::write_batched()'s queue, made on its first use (an
  // io that never uses it pays one pointer).
  std::unique_ptr<send_queue> sendq;

  // Backend requests that may still complete with this state's address.
  int inflight = 0;
  call* drain_waiter = nullptr;  // woken when inflight drops to 0 (detach)
  bool released = false;         // the io layer gave it up; the backend frees it
};

inline bool fd_is_stream_socket(int fd) {
  int type = 0;
  socklen_t len = sizeof type;
  return ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM;
}

// Short-read gating, shared by both backends' direct reads. A short read from
// a stream socket means its queue was empty at that instant; any byte that
// arrives later raises a readiness event (an epoll edge, a POLL_ADD
// completion) that sets `readable` again. Until then a read can wait for it
// instead of paying for a recv that would only say EAGAIN.
inline bool stream_known_drained(const io_state* s, size_t len) { return s->stream && !s->readable && len > 0; }
inline void note_stream_read(io_state* s, size_t got, size_t len) {
  if (s->stream && got > 0 && got < len) s->readable = false;
}

// Called by a backend, on the owning machine, when `s` may be ready for
// `events` (EPOLLIN / EPOLLOUT / EPOLLERR / EPOLLHUP bits) or when a
// completion was queued on it. Wakes the matching waiters. Defined in io.cc.
void io_state_ready(io_state* s, uint32_t events);
// Called by a backend when s->inflight dropped to zero.
void io_state_drained(io_state* s);

}  // namespace mm::detail
