// The io_uring backend of a machine (liburing 2.3, as in Debian bookworm).
//
// Thread: everything here runs on the owning machine's thread, except
// notify(), which any thread may call, and the destructor, which may run on
// the thread that joins the machine (it only closes and unmaps).
//
// Requests kept in flight per io_state (each counted once in s->inflight
// until its final completion, the one without IORING_CQE_F_MORE):
//   - one multishot recv into the provided-buffer ring (s->recv_armed),
//   - one multishot accept (s->accept_armed),
//   - one oneshot POLL_ADD per direction (s->poll_armed bits),
//   - one SEND of io::write_batched()'s queue (s->sendq->armed).
// Other sends and datagram I/O are direct non-blocking syscalls; io_uring
// only tells us when to retry them.
//
// This file: submission, the backend interface and the completion loop. The class is in
// backend_uring_class.h, the set-up in backend_uring_setup.cc, the batched sends in
// backend_uring_send.cc.
#include "backend_uring.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_set>
#include <utility>
#include <vector>

#include "backend_uring_class.h"

namespace mm::detail {
namespace {

// Multishot accept keeps taking connections whether or not anyone calls
// try_accept; past this many queued fds it is cancelled (the kernel backlog
// holds the rest) and re-armed once the queue is empty.
constexpr size_t kAcceptQueueMax = 256;
// Multishot recv drains a socket into the shared ring whether or not its
// coroutine reads, which would take TCP's back-pressure away from the peer
// and let one connection hold the whole ring. Past this many unread chunks
// the recv is cancelled (the socket's own buffer then fills and the peer
// waits); try_recv re-arms it once the coroutine has read them all.
constexpr size_t kRxChunksMax = 8;

bool is_transient(int e) { return e == EAGAIN || e == EWOULDBLOCK || e == EINTR; }

}  // namespace

// ---------------------------------------------------------------- submission

// Returns nullptr only if the kernel would not take the queued SQEs either.
io_uring_sqe* backend_uring::get_sqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe) return sqe;
  submitted_ += io_uring_sq_ready(&ring_);
  io_uring_submit(&ring_);
  return io_uring_get_sqe(&ring_);
}

bool backend_uring::arm_recv(io_state* s) {
  io_uring_sqe* sqe = get_sqe();
  if (!sqe) return false;
  io_uring_prep_recv_multishot(sqe, s->fd, nullptr, 0, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = kBufferGroup;
  io_uring_sqe_set_data64(sqe, tag(s, op::Recv));
  s->recv_armed = true;
  s->inflight++;
  stats_.recv_arms++;
  return true;
}

bool backend_uring::arm_accept(io_state* s) {
  io_uring_sqe* sqe = get_sqe();
  if (!sqe) return false;
  io_uring_prep_multishot_accept(sqe, s->fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  io_uring_sqe_set_data64(sqe, tag(s, op::Accept));
  s->accept_armed = true;
  s->inflight++;
  return true;
}

void backend_uring::arm_poll(io_state* s, uint32_t bit) {
  if (s->poll_armed & bit) return;
  io_uring_sqe* sqe = get_sqe();
  if (!sqe) {
    deferred_ready_.emplace_back(s, bit);
    return;
  }
  // POLLIN/POLLOUT have the same values as EPOLLIN/EPOLLOUT.
  io_uring_prep_poll_add(sqe, s->fd, bit);
  io_uring_sqe_set_data64(sqe, tag(s, bit == EPOLLIN ? op::PollIn : op::PollOut));
  s->poll_armed |= bit;
  s->inflight++;
  stats_.polls_armed++;
}

void backend_uring::arm_wake() {
  io_uring_sqe* sqe = get_sqe();
  if (!sqe) return;  // wait() tries again
  io_uring_prep_read(sqe, wake_fd_, &wake_value_, sizeof wake_value_, 0);
  io_uring_sqe_set_data64(sqe, static_cast<uint64_t>(op::Wake));
  wake_armed_ = true;
}

void backend_uring::submit_cancel(io_state* s, op o) {
  io_uring_sqe* sqe = get_sqe();
  if (!sqe) {
    // Cannot happen after a successful submit unless the kernel refuses all
    // work; a released state would then never be freed. Say so and stop.
    std::fprintf(stderr, "machinarium: io_uring: no SQE for a cancel request\n");
    std::abort();
  }
  io_uring_prep_cancel64(sqe, tag(s, o), 0);
  io_uring_sqe_set_data64(sqe, static_cast<uint64_t>(op::Cancel));
}

// ---------------------------------------------------------------- the interface

int backend_uring::attach(io_state* s) {
  if (s->fd < 0) return -EBADF;
  s->owner = this;
  // Only stream sockets get a multishot recv into the buffer ring; pipes
  // and datagram sockets are read with plain read()/recv().
  s->stream = fd_is_stream_socket(s->fd);
  s->readable = true;  // the first direct read tries the syscall
  return 0;
}

void backend_uring::cancel(io_state* s) {
  if (s->recv_armed && !s->recv_paused) submit_cancel(s, op::Recv);
  if (s->accept_armed) submit_cancel(s, op::Accept);
  if (s->poll_armed & EPOLLIN) submit_cancel(s, op::PollIn);
  if (s->poll_armed & EPOLLOUT) submit_cancel(s, op::PollOut);
  if (s->sendq && s->sendq->armed) submit_cancel(s, op::Send);
}

void backend_uring::release(io_state* s) {
  for (const rx_chunk& c : s->rx) recycle(c.buffer_id);
  s->rx.clear();
  // Accepted connections nobody will take any more.
  for (int fd : s->accepted) ::close(fd);
  s->accepted.clear();
  std::erase_if(deferred_ready_, [s](const auto& d) { return d.first == s; });
  s->released = true;
  accept_paused_.erase(s);
  if (s->inflight == 0) {
    delete s;
    return;
  }
  cancel(s);
  released_pending_.insert(s);
}

ssize_t backend_uring::try_recv(io_state* s, void* buf, size_t len) {
  // Order matters: bytes already taken by the multishot recv come first, and
  // no direct recv may overtake a multishot recv that is still armed.
  if (!s->rx.empty()) return copy_rx(s, buf, len);
  if (s->rx_end != 0) return s->rx_end == 1 ? 0 : s->rx_end;
  if (s->recv_armed) return -EAGAIN;
  if (multishot_recv_ && buffers_in_kernel_ >= rearm_threshold_ && s->stream && arm_recv(s)) {
    return -EAGAIN;
  }
  // No buffer ring, or it ran dry (ENOBUFS): read straight into the caller's
  // buffer until buffers come back.
  return direct_recv(s, buf, len);
}

ssize_t backend_uring::direct_recv(io_state* s, void* buf, size_t len) {
  // The poll (any later byte completes it) sets readable again; see on_poll.
  if (stream_known_drained(s, len)) return wait_for(s, EPOLLIN);
  for (;;) {
    stats_.direct_recvs++;
    ssize_t n = ::recv(s->fd, buf, len, MSG_DONTWAIT);
    if (n < 0 && errno == ENOTSOCK) n = ::read(s->fd, buf, len);
    if (n > 0) {
      note_stream_read(s, static_cast<size_t>(n), len);
      return n;
    }
    if (n == 0) {
      if (len > 0) s->rx_end = 1;  // end of stream is sticky, as with multishot
      return 0;
    }
    int e = errno;
    if (e == EINTR) continue;
    if (is_transient(e)) {
      s->readable = false;
      return wait_for(s, EPOLLIN);
    }
    if (e != ENOMEM && e != ENOBUFS) s->rx_end = -e;
    return -e;
  }
}

ssize_t backend_uring::copy_rx(io_state* s, void* buf, size_t len) {
  char* out = static_cast<char*>(buf);
  size_t done = 0;
  while (done < len && !s->rx.empty()) {
    rx_chunk& c = s->rx.front();
    size_t n = std::min<size_t>(len - done, c.length - c.offset);
    std::memcpy(out + done, c.data + c.offset, n);
    c.offset += static_cast<uint32_t>(n);
    done += n;
    if (c.offset == c.length) {
      recycle(c.buffer_id);
      s->rx.pop_front();
    }
  }
  return static_cast<ssize_t>(done);
}

void backend_uring::recycle(uint16_t bid) {
  io_uring_buf_ring_add(buf_ring_, slab_ + static_cast<size_t>(bid) * buffer_size_, buffer_size_, bid,
                        io_uring_buf_ring_mask(buffers_), 0);
  io_uring_buf_ring_advance(buf_ring_, 1);
  buffers_in_kernel_++;
}

int backend_uring::try_accept(io_state* s, sockaddr_storage* peer, socklen_t* peer_len) {
  if (!s->accepted.empty()) {
    int fd = s->accepted.front();
    s->accepted.pop_front();
    if (peer && peer_len) {
      *peer_len = sizeof *peer;
      if (::getpeername(fd, reinterpret_cast<sockaddr*>(peer), peer_len) < 0) *peer_len = 0;
    }
    return fd;
  }
  if (s->accept_error != 0) {
    // Reported once: EMFILE and the like pass.
    int e = s->accept_error;
    s->accept_error = 0;
    return e;
  }
  if (s->accept_armed) return -EAGAIN;
  if (multishot_accept_ && arm_accept(s)) return -EAGAIN;
  for (;;) {
    socklen_t len = sizeof(sockaddr_storage);
    sockaddr_storage ignored;
    sockaddr_storage* into = peer ? peer : &ignored;
    int fd = ::accept4(s->fd, reinterpret_cast<sockaddr*>(into), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      if (peer_len) *peer_len = len;
      return fd;
    }
    int e = errno;
    if (e == EINTR || e == ECONNABORTED) continue;
    if (is_transient(e)) return wait_for(s, EPOLLIN);
    return -e;
  }
}

// The multishot accept outlives the accept() that armed it. The cancel is
// submitted with the loop's next io_uring_enter; connections the kernel
// completed before it took effect arrive as completions ahead of the final
// -ECANCELED one and are queued on s->accepted like any other (a cancelled
// multishot accept loses none: each connection is either in a completion or
// still in the listen queue). A pause's cancel already in flight serves.
void backend_uring::stop_accept(io_state* s) {
  if (!s->accept_armed || s->accept_stopping) return;
  s->accept_stopping = true;
  if (accept_paused_.erase(s) == 0) submit_cancel(s, op::Accept);
}

ssize_t backend_uring::try_writev(io_state* s, const iovec* iov, int count) {
  // sendmsg rather than writev: MSG_NOSIGNAL keeps a closed peer from raising
  // SIGPIPE. writev only for what is not a socket (a pipe in a test).
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov);
  msg.msg_iovlen = static_cast<size_t>(count);
  for (;;) {
    ssize_t n = ::sendmsg(s->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = ::writev(s->fd, iov, count);
    if (n >= 0) return n;
    int e = errno;
    if (e == EINTR) continue;
    if (is_transient(e)) return wait_for(s, EPOLLOUT);
    return -e;
  }
}

ssize_t backend_uring::try_sendmsg(io_state* s, const msghdr* msg) {
  for (;;) {
    ssize_t n = ::sendmsg(s->fd, msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) return n;
    int e = errno;
    if (e == EINTR) continue;
    if (is_transient(e)) return wait_for(s, EPOLLOUT);
    return -e;
  }
}

ssize_t backend_uring::try_recvmsg(io_state* s, msghdr* msg) {
  for (;;) {
    ssize_t n = ::recvmsg(s->fd, msg, MSG_DONTWAIT);
    if (n >= 0) return n;
    int e = errno;
    if (e == EINTR) continue;
    if (is_transient(e)) return wait_for(s, EPOLLIN);
    return -e;
  }
}

void backend_uring::arm(io_state* s, uint32_t events) {
  if (events & EPOLLIN) arm_poll(s, EPOLLIN);
  if (events & EPOLLOUT) arm_poll(s, EPOLLOUT);
}

void backend_uring::notify() {
  uint64_t one = 1;
  // A full counter (2^64 - 2 pending wake-ups) cannot happen; EINTR can.
  while (::write(wake_fd_, &one, sizeof one) < 0 && errno == EINTR) {}
}

// ---------------------------------------------------------------- the loop

int backend_uring::wait(int64_t timeout_ns) {
  if (!wake_armed_) arm_wake();
  if (!deferred_ready_.empty()) timeout_ns = 0;
  // The results only say whether we timed out or were interrupted (-ETIME,
  // -EINTR) or submitted; what arrived is read off the CQ below either way.
  // submit_and_get_events enters with GETEVENTS, which DEFER_TASKRUN needs to
  // run completions even when we do not block.
  submitted_ += io_uring_sq_ready(&ring_);
  if (timeout_ns == 0) {
    io_uring_submit_and_get_events(&ring_);
  } else if (timeout_ns < 0) {
    io_uring_submit_and_wait(&ring_, 1);
  } else {
    __kernel_timespec ts{};
    ts.tv_sec = timeout_ns / 1000000000;
    ts.tv_nsec = timeout_ns % 1000000000;
    io_uring_cqe* first = nullptr;
    io_uring_submit_and_wait_timeout(&ring_, &first, 1, &ts, nullptr);
  }

  int dispatched = 0;
  if (!deferred_ready_.empty()) {
    std::vector<std::pair<io_state*, uint32_t>> now;
    now.swap(deferred_ready_);
    for (const auto& [s, events] : now) {
      io_state_ready(s, events);
      dispatched++;
    }
  }
  unsigned head;
  unsigned seen = 0;
  io_uring_cqe* cqe;
  io_uring_for_each_cqe(&ring_, head, cqe) {
    seen++;
    if (dispatch(cqe)) dispatched++;
  }
  io_uring_cq_advance(&ring_, seen);
  completed_ += seen;
  return dispatched;
}

bool backend_uring::dispatch(const io_uring_cqe* cqe) {
  uint64_t data = io_uring_cqe_get_data64(cqe);
  if (data == LIBURING_UDATA_TIMEOUT) return false;
  auto o = static_cast<op>(data & kTagMask);
  auto* s = reinterpret_cast<io_state*>(data & ~kTagMask);
  switch (o) {
    case op::Recv: on_recv(s, cqe->res, cqe->flags); return true;
    case op::Accept: on_accept(s, cqe->res, cqe->flags); return true;
    case op::PollIn: on_poll(s, EPOLLIN, cqe->res); return true;
    case op::PollOut: on_poll(s, EPOLLOUT, cqe->res); return true;
    case op::Wake:
      // Reading the eventfd drained it; keep one read armed unless the ring
      // is being torn down.
      wake_armed_ = false;
      if (cqe->res != -ECANCELED) arm_wake();
      return true;
    case op::Send: on_send(s, cqe->res); return true;
    case op::Cancel: return false;
  }
  return false;
}

void backend_uring::on_recv(io_state* s, int res, uint32_t flags) {
  bool more = flags & IORING_CQE_F_MORE;
  if (flags & IORING_CQE_F_BUFFER) {
    auto bid = static_cast<uint16_t>(flags >> IORING_CQE_BUFFER_SHIFT);
    buffers_in_kernel_--;
    if (res > 0 && !s->released) {
      s->rx.push_back(rx_chunk{slab_ + static_cast<size_t>(bid) * buffer_size_, static_cast<uint32_t>(res), 0, bid});
      if (more && s->rx.size() >= kRxChunksMax && !s->recv_paused) {
        s->recv_paused = true;
        stats_.recv_pauses++;
        submit_cancel(s, op::Recv);
      }
    } else {
      recycle(bid);
    }
  }
  bool paused = s->recv_paused;
  if (!more) {
    s->recv_armed = false;
    s->recv_paused = false;
  }
  bool wake = true;
  if (res > 0) {
    recv_verified_ = true;
    stats_.recv_chunks++;
  } else if (res == 0) {
    if (s->rx_end == 0) s->rx_end = 1;
  } else if (res == -ENOBUFS) {
    // The ring ran dry; try_recv reads directly until buffers come back.
    stats_.recv_enobufs++;
  } else if (res == -ECANCELED) {
    // Asked for; the stream itself is fine. After our own pause, a waiter
    // that already emptied rx must retry, which re-arms; a cancel asked for
    // by the io layer (detach, release) wakes nobody.
    wake = paused && s->rx.empty();
  } else if (res == -EAGAIN) {
    // Kernels that honour O_NONBLOCK on multishot: wait for data, then re-arm.
    arm_poll(s, EPOLLIN);
    wake = false;
  } else if (res == -EINVAL && !recv_verified_) {
    multishot_recv_ = false;  // kernel without multishot recv (< 6.0)
  } else if (s->rx_end == 0) {
    s->rx_end = res;
  }
  if (wake) ready(s, EPOLLIN);
  if (!more) finish(s);
}

void backend_uring::on_accept(io_state* s, int res, uint32_t flags) {
  bool more = flags & IORING_CQE_F_MORE;
  if (!more) s->accept_armed = false;
  bool wake = true;
  if (res >= 0) {
    accept_verified_ = true;
    if (s->released) {
      ::close(res);
    } else {
      s->accepted.push_back(res);
      stats_.accepts_queued++;
      if (more && s->accepted.size() >= kAcceptQueueMax && accept_paused_.insert(s).second) {
        submit_cancel(s, op::Accept);
      }
    }
  } else if (res == -ECANCELED) {
    // Our own pause: a waiter that emptied the queue meanwhile must retry,
    // which re-arms. A cancel asked for by the io layer wakes nobody.
    wake = accept_paused_.erase(s) > 0 && s->accepted.empty();
  } else if (res == -EAGAIN) {
    arm_poll(s, EPOLLIN);
    wake = false;
  } else if (res == -EINVAL && !accept_verified_) {
    multishot_accept_ = false;  // kernel without multishot accept (< 5.19)
  } else {
    s->accept_error = res;
  }
  if (!more) accept_paused_.erase(s);
  if (!more && s->accept_stopping) {
    s->accept_stopping = false;
    wake = true;  // io::stop_accepting waits for this completion
  }
  if (wake) ready(s, EPOLLIN);
  if (!more) finish(s);
}

void backend_uring::on_poll(io_state* s, uint32_t bit, int res) {
  s->poll_armed &= ~bit;
  // However the input poll ended, the next direct read tries the syscall
  // (a spurious try costs one EAGAIN; a missed one would stall).
  if (bit == EPOLLIN) s->readable = true;
  if (res >= 0) {
    ready(s, static_cast<uint32_t>(res) | bit);
  } else if (res != -ECANCELED) {
    ready(s, bit | EPOLLERR);  // the retried syscall reports the real error
  }
  finish(s);
}

}  // namespace mm::detail
