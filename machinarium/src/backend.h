// The kernel event backend of one machine: io_uring or epoll, chosen at
// start-up by backend_create() (probe, fall back, log why). One instance per
// machine; every method except notify() runs on that machine's thread.
//
// Contract with io.cc: every socket operation first calls the backend's try_*
// method. A result other than -EAGAIN is final. On -EAGAIN the backend has
// arranged to call io_state_ready() when the fd may be ready again (or a
// completion for it arrived), and io.cc suspends the coroutine on the matching
// waiter with the caller's timeout, then tries again.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>

#include "io_state.h"
#include "machinarium.h"

namespace mm::detail {

class backend {
 public:
  virtual ~backend() = default;
  virtual const char* name() const = 0;

  // Starts watching s->fd. 0 or -errno.
  virtual int attach(io_state* s) = 0;
  // Cancels every request in flight for s (completions still arrive, with
  // errors; io_state_drained() is called when s->inflight reaches 0).
  virtual void cancel(io_state* s) = 0;
  // Ends what the backend accepts on a listener by itself, beyond what
  // try_accept() was asked for: io_uring's multishot accept stays armed in
  // the kernel after the accept() that armed it returned or was cancelled,
  // and goes on taking connections. This asks the kernel to cancel it;
  // accept_stopped() says when its last completion has arrived (the
  // connections it took by then are in s->accepted). No-op on epoll.
  virtual void stop_accept(io_state*) {}
  virtual bool accept_stopped(const io_state*) const { return true; }
  // The io layer gives s up (after close or detach). The backend stops
  // watching it and deletes s once no completion can refer to it any more.
  virtual void release(io_state* s) = 0;

  // Non-blocking attempts. Return >= 0 / a new fd on success, -EAGAIN when the
  // caller must wait (readiness is then armed), or another -errno.
  virtual ssize_t try_recv(io_state* s, void* buf, size_t len) = 0;
  virtual int try_accept(io_state* s, sockaddr_storage* peer, socklen_t* peer_len) = 0;
  virtual ssize_t try_writev(io_state* s, const iovec* iov, int count) = 0;
  virtual ssize_t try_recvmsg(io_state* s, msghdr* msg) = 0;
  virtual ssize_t try_sendmsg(io_state* s, const msghdr* msg) = 0;
  // io::write_batched(): copies the bytes into s->sendq and has them sent by
  // a request submitted with the loop's next wait(), so the writes of one
  // loop turn to many sockets cost one syscall. Returns the byte count
  // (s->sendq->queued) the caller waits for: io_state_ready(s, EPOLLOUT)
  // is called on each completion. -EOPNOTSUPP: the backend only sends
  // directly (epoll, or not a stream socket); the caller then uses writev.
  virtual int64_t queue_send(io_state*, const void*, size_t) { return -EOPNOTSUPP; }
  // Arms a readiness notification for `events` (EPOLLIN and/or EPOLLOUT),
  // for waits that are not a syscall (connect completion, eventfd, signalfd).
  virtual void arm(io_state* s, uint32_t events) = 0;

  // Submits what is pending, blocks up to timeout_ns (0: do not block; < 0:
  // until an event or notify()), and dispatches every event that arrived.
  // Returns the number of events dispatched.
  virtual int wait(int64_t timeout_ns) = 0;
  // Interrupts wait() from any thread. Coalescing is the caller's business.
  virtual void notify() = 0;

  // io_uring: SQEs handed to the kernel and CQEs reaped (0 for epoll). The
  // machine copies them into its counters after each wait(). [machine thread]
  uint64_t submitted() const { return submitted_; }
  uint64_t completed() const { return completed_; }

 protected:
  uint64_t submitted_ = 0;
  uint64_t completed_ = 0;
};

std::unique_ptr<backend> backend_epoll_create(std::string* error);
std::unique_ptr<backend> backend_uring_create(const machine_config& cfg, std::string* error);
// Probes and creates the configured backend; falls back from io_uring to epoll
// (unless io_uring was forced) and says why in *reason.
std::unique_ptr<backend> backend_create(const machine_config& cfg, std::string* reason);

}  // namespace mm::detail
