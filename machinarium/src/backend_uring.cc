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

namespace mm::detail {
namespace {

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
// Multishot accept keeps taking connections whether or not anyone calls
// try_accept; past this many queued fds it is cancelled (the kernel backlog
// holds the rest) and re-armed once the queue is empty.
constexpr size_t kAcceptQueueMax = 256;
constexpr unsigned kMaxBufferRing = 32768;  // kernel limit on ring entries
// Multishot recv drains a socket into the shared ring whether or not its
// coroutine reads, which would take TCP's back-pressure away from the peer
// and let one connection hold the whole ring. Past this many unread chunks
// the recv is cancelled (the socket's own buffer then fills and the peer
// waits); try_recv re-arms it once the coroutine has read them all.
constexpr size_t kRxChunksMax = 8;
// A send queue's buffer above this is freed rather than kept for reuse once
// it has been sent.
constexpr size_t kSendKeep = 64 * 1024;

uint64_t tag(io_state* s, op o) {
  return reinterpret_cast<uintptr_t>(s) | static_cast<uint64_t>(o);
}

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

unsigned round_up_pow2(unsigned n) {
  unsigned p = 1;
  while (p < n && p < kMaxBufferRing) p <<= 1;
  return p;
}

std::string errno_text(int e) { return std::strerror(e); }

bool is_transient(int e) { return e == EAGAIN || e == EWOULDBLOCK || e == EINTR; }

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

  int wake_fd_ = -1;          // blocking eventfd, so io_uring waits on it
  uint64_t wake_value_ = 0;   // target of the armed read
  bool wake_armed_ = false;

  backend_uring_stats stats_;
  std::unordered_set<io_state*> released_pending_;
  // States whose multishot accept we cancelled because the queue was full.
  std::unordered_set<io_state*> accept_paused_;
  // Readiness to report on the next wait() because no SQE could be had to arm
  // a poll (the waiter then simply retries).
  std::vector<std::pair<io_state*, uint32_t>> deferred_ready_;
};

// ---------------------------------------------------------------- set-up

int backend_uring::init(const machine_config& cfg, std::string* error) {
  unsigned entries = cfg.uring_entries ? cfg.uring_entries : 256;
  int rc = setup_ring(entries, error);
  if (rc < 0) return rc;
  rc = check_opcodes(error);
  if (rc < 0) return rc;
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    int e = errno;
    *error = "eventfd: " + errno_text(e);
    return -e;
  }
  if (cfg.uring_multishot_recv) {
    setup_buffer_ring(cfg);
  } else {
    buf_ring_note_ = "multishot recv off (recv + POLL_ADD)";  // the ring only serves multishot recv
  }
  // What the set-up told us about the kernel: COOP_TASKRUN and buffer rings
  // came in 5.19, with multishot accept; DEFER_TASKRUN in 6.1, after
  // multishot recv (6.0). Where that leaves doubt, the first EINVAL decides.
  bool at_least_5_19 = buf_ring_ != nullptr || std::strcmp(taskrun_, "no task-run flags") != 0;
  multishot_accept_ = at_least_5_19;
  accept_verified_ = multishot_accept_ && std::strcmp(taskrun_, "DEFER_TASKRUN") == 0;
  recv_verified_ = multishot_recv_ && std::strcmp(taskrun_, "DEFER_TASKRUN") == 0;
  arm_wake();
  return 0;
}

int backend_uring::setup_ring(unsigned entries, std::string* error) {
  // Newest first; an older kernel answers EINVAL to flags it does not know.
  struct attempt {
    unsigned flags;
    const char* name;
  };
  const attempt attempts[] = {
      {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_CQSIZE,
       "DEFER_TASKRUN"},
      {IORING_SETUP_COOP_TASKRUN | IORING_SETUP_CQSIZE, "COOP_TASKRUN"},
      {IORING_SETUP_CQSIZE, "no task-run flags"},
      {0, "no task-run flags"},
  };
  int rc = -EINVAL;
  for (const attempt& a : attempts) {
    io_uring_params p{};
    p.flags = a.flags;
    // Multishot requests post many CQEs per SQE: give the CQ room.
    p.cq_entries = entries * 4;
    rc = io_uring_queue_init_params(entries, &ring_, &p);
    if (rc == 0) {
      ring_ok_ = true;
      taskrun_ = a.name;
      return 0;
    }
    if (rc != -EINVAL) break;
  }
  switch (-rc) {
    case ENOSYS:
      *error = "io_uring not available (seccomp or old kernel)";
      break;
    case EPERM:
      *error = "io_uring disabled by kernel.io_uring_disabled";
      break;
    case ENOMEM:
      *error = "memlock limit too low for the ring";
      break;
    default:
      *error = "io_uring_queue_init failed: " + errno_text(-rc);
      break;
  }
  return rc;
}

int backend_uring::check_opcodes(std::string* error) {
  io_uring_probe* probe = io_uring_get_probe_ring(&ring_);
  if (!probe) {
    *error = "io_uring cannot probe opcodes (kernel older than 5.6)";
    return -ENOSYS;
  }
  // ASYNC_CANCEL rather than "POLL_REMOVE or ASYNC_CANCEL": multishot recv and
  // accept can only be cancelled with it (and every kernel with RECV has it).
  struct needed {
    int opcode;
    const char* name;
  };
  const needed needs[] = {
      {IORING_OP_POLL_ADD, "POLL_ADD"}, {IORING_OP_ASYNC_CANCEL, "ASYNC_CANCEL"},
      {IORING_OP_ACCEPT, "ACCEPT"},     {IORING_OP_RECV, "RECV"},
      {IORING_OP_READ, "READ"},
  };
  int rc = 0;
  for (const needed& n : needs) {
    if (!io_uring_opcode_supported(probe, n.opcode)) {
      *error = std::string("io_uring lacks opcode ") + n.name;
      rc = -EOPNOTSUPP;
      break;
    }
  }
  io_uring_free_probe(probe);
  return rc;
}

// Without a buffer ring (kernel < 5.19, or no memory) receives are plain
// recv() + POLL_ADD; that is slower but correct, so failure is not fatal.
void backend_uring::setup_buffer_ring(const machine_config& cfg) {
  if (cfg.uring_buffers == 0 || cfg.uring_buffer_size == 0) {
    buf_ring_note_ = "no buffer ring (disabled by configuration)";
    return;
  }
  unsigned n = round_up_pow2(cfg.uring_buffers);
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t ring_bytes = round_up(n * sizeof(io_uring_buf), page);
  size_t slab_bytes = round_up(static_cast<size_t>(n) * cfg.uring_buffer_size, page);

  void* ring_mem = ::mmap(nullptr, ring_bytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ring_mem == MAP_FAILED) {
    buf_ring_note_ = "no buffer ring (mmap: " + errno_text(errno) + ")";
    return;
  }
  void* slab = ::mmap(nullptr, slab_bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (slab == MAP_FAILED) {
    buf_ring_note_ = "no buffer ring (mmap: " + errno_text(errno) + ")";
    ::munmap(ring_mem, ring_bytes);
    return;
  }
  auto* br = static_cast<io_uring_buf_ring*>(ring_mem);
  io_uring_buf_ring_init(br);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<uintptr_t>(br);
  reg.ring_entries = n;
  reg.bgid = kBufferGroup;
  int rc = io_uring_register_buf_ring(&ring_, &reg, 0);
  if (rc < 0) {
    buf_ring_note_ = "no buffer ring (register: " + errno_text(-rc) + ")";
    ::munmap(slab, slab_bytes);
    ::munmap(ring_mem, ring_bytes);
    return;
  }
  buf_ring_ = br;
  buf_ring_bytes_ = ring_bytes;
  slab_ = static_cast<char*>(slab);
  slab_bytes_ = slab_bytes;
  buffers_ = n;
  buffer_size_ = cfg.uring_buffer_size;
  int mask = io_uring_buf_ring_mask(n);
  for (unsigned i = 0; i < n; i++) {
    io_uring_buf_ring_add(br, slab_ + static_cast<size_t>(i) * buffer_size_, buffer_size_,
                          static_cast<unsigned short>(i), mask, static_cast<int>(i));
  }
  io_uring_buf_ring_advance(br, static_cast<int>(n));
  buffers_in_kernel_ = n;
  // Hysteresis: after the ring ran dry, wait for an eighth of it to come back
  // before re-arming multishot recv, so one slow reader does not make every
  // socket bounce between ENOBUFS and re-arming.
  rearm_threshold_ = std::max(1u, n / 8);
  multishot_recv_ = cfg.uring_multishot_recv;
  char note[96];
  std::snprintf(note, sizeof note, "buffer ring %u x %u B", n, buffer_size_);
  buf_ring_note_ = note;
}

std::string backend_uring::features() const {
  std::string f = taskrun_;
  f += multishot_accept_ ? ", multishot accept" : ", accept4 + poll";
  if (multishot_accept_ && !accept_verified_) f += " (unconfirmed)";
  f += multishot_recv_ ? ", multishot recv" : ", recv + poll";
  if (multishot_recv_ && !recv_verified_) f += " (unconfirmed)";
  f += ", ";
  f += buf_ring_note_;
  return f;
}

backend_uring::~backend_uring() {
  // Closing the ring cancels whatever is still in flight; no completion can
  // be dispatched after this, so the states still waiting for one are freed.
  if (ring_ok_) io_uring_queue_exit(&ring_);
  for (io_state* s : released_pending_) delete s;
  released_pending_.clear();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (slab_) ::munmap(slab_, slab_bytes_);
  if (buf_ring_) ::munmap(buf_ring_, buf_ring_bytes_);
}

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
  if (multishot_recv_ && buffers_in_kernel_ >= rearm_threshold_ && s->stream &&
      arm_recv(s)) {
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
  io_uring_buf_ring_add(buf_ring_, slab_ + static_cast<size_t>(bid) * buffer_size_, buffer_size_,
                        bid, io_uring_buf_ring_mask(buffers_), 0);
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
    int fd = ::accept4(s->fd, reinterpret_cast<sockaddr*>(into), &len,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
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
  while (::write(wake_fd_, &one, sizeof one) < 0 && errno == EINTR) {
  }
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
    case op::Recv:
      on_recv(s, cqe->res, cqe->flags);
      return true;
    case op::Accept:
      on_accept(s, cqe->res, cqe->flags);
      return true;
    case op::PollIn:
      on_poll(s, EPOLLIN, cqe->res);
      return true;
    case op::PollOut:
      on_poll(s, EPOLLOUT, cqe->res);
      return true;
    case op::Wake:
      // Reading the eventfd drained it; keep one read armed unless the ring
      // is being torn down.
      wake_armed_ = false;
      if (cqe->res != -ECANCELED) arm_wake();
      return true;
    case op::Send:
      on_send(s, cqe->res);
      return true;
    case op::Cancel:
      return false;
  }
  return false;
}

void backend_uring::on_recv(io_state* s, int res, uint32_t flags) {
  bool more = flags & IORING_CQE_F_MORE;
  if (flags & IORING_CQE_F_BUFFER) {
    auto bid = static_cast<uint16_t>(flags >> IORING_CQE_BUFFER_SHIFT);
    buffers_in_kernel_--;
    if (res > 0 && !s->released) {
      s->rx.push_back(rx_chunk{slab_ + static_cast<size_t>(bid) * buffer_size_,
                               static_cast<uint32_t>(res), 0, bid});
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

// ---------------------------------------------------------------- batched sends
//
// io::write_batched() copies its bytes into s->sendq and waits; the SEND is
// only prepared here and goes to the kernel with the loop's next
// io_uring_enter, together with every other socket's. Without MSG_DONTWAIT:
// on a full socket buffer the kernel waits for room itself (io_uring's
// internal poll), and a shutdown() or a cancel ends it. A short send is
// re-submitted from where it stopped when its completion is dispatched.

int64_t backend_uring::queue_send(io_state* s, const void* buf, size_t len) {
  if (!s->stream) return -EOPNOTSUPP;
  if (!s->sendq) s->sendq = std::make_unique<send_queue>();
  send_queue& q = *s->sendq;
  if (q.error != 0) return q.error;
  q.next.append(static_cast<const char*>(buf), len);
  q.queued += len;
  if (!q.armed) arm_send(s);
  return q.error != 0 ? q.error : static_cast<int64_t>(q.queued);
}

void backend_uring::arm_send(io_state* s) {
  send_queue& q = *s->sendq;
  if (q.offset == q.wire.size()) {
    // The wire buffer is done with: the queued bytes take its place (and the
    // old one's capacity, for the next turn, unless a large write left it
    // big: an idle connection should not keep that).
    if (q.wire.capacity() > kSendKeep) {
      std::string().swap(q.wire);
    } else {
      q.wire.clear();
    }
    q.offset = 0;
    q.wire.swap(q.next);
  }
  if (q.wire.empty()) return;
  io_uring_sqe* sqe = get_sqe();
  if (!sqe) {
    // The kernel takes no work at all (get_sqe already submitted what was
    // queued): fail the queue rather than leave its waiter hanging.
    q.error = -ENOBUFS;
    ready(s, EPOLLOUT);
    return;
  }
  io_uring_prep_send(sqe, s->fd, q.wire.data() + q.offset, q.wire.size() - q.offset, MSG_NOSIGNAL);
  io_uring_sqe_set_data64(sqe, tag(s, op::Send));
  q.armed = true;
  s->inflight++;
  stats_.sends_armed++;
}

void backend_uring::on_send(io_state* s, int res) {
  send_queue& q = *s->sendq;
  q.armed = false;
  if (res > 0) {
    q.offset += static_cast<size_t>(res);
    q.sent += static_cast<uint64_t>(res);
    if (q.offset < q.wire.size()) stats_.sends_short++;
  } else if (res == -EINTR || res == -EAGAIN) {
    // Nothing sent: simply try again.
  } else if (q.error == 0) {
    q.error = res == 0 ? -EPIPE : res;  // 0 bytes for a non-empty send: nothing more will go
  }
  if (q.error == 0 && !s->released) {
    arm_send(s);  // the rest of a short send, or what was queued meanwhile
  }
  ready(s, EPOLLOUT);  // the waiter counts q.sent against its own target
  finish(s);
}

void backend_uring::finish(io_state* s) {
  if (--s->inflight > 0) return;
  if (s->released) {
    released_pending_.erase(s);
    delete s;
    return;
  }
  if (s->drain_waiter) io_state_drained(s);
}

}  // namespace

std::unique_ptr<backend> backend_uring_create(const machine_config& cfg, std::string* error) {
  auto b = std::make_unique<backend_uring>();
  if (b->init(cfg, error) < 0) return nullptr;
  return b;
}

std::string backend_uring_features(const backend* b) {
  return static_cast<const backend_uring*>(b)->features();
}

backend_uring_stats backend_uring_stats_get(const backend* b) {
  return static_cast<const backend_uring*>(b)->stats();
}

void backend_uring_disable_multishot(backend* b, bool accept, bool recv) {
  static_cast<backend_uring*>(b)->disable_multishot(accept, recv);
}

size_t backend_uring_released_pending(const backend* b) {
  return static_cast<const backend_uring*>(b)->released_pending();
}

}  // namespace mm::detail
