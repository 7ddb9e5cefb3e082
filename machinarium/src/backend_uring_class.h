// The io_uring backend's class, shared by its files: backend_uring_setup.cc (the ring,
// the provided-buffer ring and the wake eventfd made and torn down; the entry points of
// backend_uring.h), backend_uring.cc (submission, the backend interface, the completion
// loop) and backend_uring_send.cc (io::write_batched's SENDs). Private to machinarium/src.
//
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
#pragma once

#include <liburing.h>

#include <cstdint>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "backend_uring.h"

namespace mm::detail {

// user_data = io_state address | op tag; io_state is 8-aligned, so the low 3
// bits are free. liburing's own timeout request (kernels without
// IORING_FEAT_EXT_ARG) uses LIBURING_UDATA_TIMEOUT = ~0, which dispatch()
// tells from a Send tag (7) on a real address before looking at the tag.
enum class op : uint64_t {
  Recv = 1,     // multishot recv into the buffer ring
  Accept = 2,   // multishot accept
  PollIn = 3,   // oneshot POLL_ADD for EPOLLIN
  PollOut = 4,  // oneshot POLL_ADD for EPOLLOUT
  Cancel = 5,   // ASYNC_CANCEL: completion ignored, not counted in inflight
  Wake = 6,     // read on the notify eventfd; no io_state
  Send = 7,     // SEND of s->sendq (io::write_batched)
};
constexpr uint64_t kTagMask = 7;
static_assert(alignof(io_state) >= 8, "io_state must leave 3 tag bits free");

constexpr uint16_t kBufferGroup = 0;

inline uint64_t tag(io_state* s, op o) { return reinterpret_cast<uintptr_t>(s) | static_cast<uint64_t>(o); }

class backend_uring final : public backend {
 public:
  backend_uring() = default;
  ~backend_uring() override;
  backend_uring(const backend_uring&) = delete;
  backend_uring& operator=(const backend_uring&) = delete;

  // Sets the ring up; must run on the machine thread (SINGLE_ISSUER binds the
  // ring to the thread that creates it). 0 or -errno with *error set.
  int init(const machine_config& cfg, std::string* error);
  std::string features() const;
  size_t released_pending() const { return released_pending_.size(); }
  const backend_uring_stats& stats() const { return stats_; }
  void disable_multishot(bool accept, bool recv) {
    if (accept) multishot_accept_ = false;
    if (recv) multishot_recv_ = false;
  }

  const char* name() const override { return "io_uring"; }
  int attach(io_state* s) override;
  void cancel(io_state* s) override;
  void release(io_state* s) override;
  ssize_t try_recv(io_state* s, void* buf, size_t len) override;
  int try_accept(io_state* s, sockaddr_storage* peer, socklen_t* peer_len) override;
  void stop_accept(io_state* s) override;
  bool accept_stopped(const io_state* s) const override { return !s->accept_armed; }
  ssize_t try_writev(io_state* s, const iovec* iov, int count) override;
  ssize_t try_recvmsg(io_state* s, msghdr* msg) override;
  ssize_t try_sendmsg(io_state* s, const msghdr* msg) override;
  int64_t queue_send(io_state* s, const void* buf, size_t len) override;
  void arm(io_state* s, uint32_t events) override;
  int wait(int64_t timeout_ns) override;
  void notify() override;

 private:
  int setup_ring(unsigned entries, std::string* error);
  int check_opcodes(std::string* error);
  void setup_buffer_ring(const machine_config& cfg);

  io_uring_sqe* get_sqe();
  bool arm_recv(io_state* s);
  bool arm_accept(io_state* s);
  void arm_poll(io_state* s, uint32_t bit);
  void arm_wake();
  void arm_send(io_state* s);
  void submit_cancel(io_state* s, op o);
  // The syscall said EAGAIN: make sure a readiness poll will wake the waiter.
  int wait_for(io_state* s, uint32_t bit) {
    arm_poll(s, bit);
    return -EAGAIN;
  }
  ssize_t direct_recv(io_state* s, void* buf, size_t len);
  ssize_t copy_rx(io_state* s, void* buf, size_t len);
  void recycle(uint16_t bid);

  bool dispatch(const io_uring_cqe* cqe);
  void on_recv(io_state* s, int res, uint32_t flags);
  void on_accept(io_state* s, int res, uint32_t flags);
  void on_poll(io_state* s, uint32_t bit, int res);
  void on_send(io_state* s, int res);
  void ready(io_state* s, uint32_t events) {
    if (!s->released) io_state_ready(s, events);
  }
  // One request of s ended (its final completion was dispatched).
  void finish(io_state* s);

  io_uring ring_{};
  bool ring_ok_ = false;
  const char* taskrun_ = "";

  // Provided-buffer ring: buffers_ buffers of buffer_size_ bytes in one slab;
  // buffer id i lives at slab_ + i * buffer_size_.
  io_uring_buf_ring* buf_ring_ = nullptr;
  size_t buf_ring_bytes_ = 0;
  char* slab_ = nullptr;
  size_t slab_bytes_ = 0;
  unsigned buffers_ = 0;
  unsigned buffer_size_ = 0;
  unsigned buffers_in_kernel_ = 0;  // given to the ring, not yet returned in a CQE
  unsigned rearm_threshold_ = 1;    // after ENOBUFS, re-arm recv once this many are free
  std::string buf_ring_note_;

  // Multishot support is assumed and confirmed by the first success; an
  // EINVAL before that means the kernel lacks it, and we fall back for good.
  bool multishot_recv_ = false;
  bool multishot_accept_ = false;
  bool recv_verified_ = false;
  bool accept_verified_ = false;

  int wake_fd_ = -1;         // blocking eventfd, so io_uring waits on it
  uint64_t wake_value_ = 0;  // target of the armed read
  bool wake_armed_ = false;

  backend_uring_stats stats_;
  std::unordered_set<io_state*> released_pending_;
  // States whose multishot accept we cancelled because the queue was full.
  std::unordered_set<io_state*> accept_paused_;
  // Readiness to report on the next wait() because no SQE could be had to arm
  // a poll (the waiter then simply retries).
  std::vector<std::pair<io_state*, uint32_t>> deferred_ready_;
};

}  // namespace mm::detail
