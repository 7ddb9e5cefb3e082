// The io_uring backend, its set-up and tear-down: the ring (with the flags the kernel takes),
// the opcode probe, the provided-buffer ring, the wake eventfd; and the entry points of
// backend_uring.h. [the machine thread, except the destructor: backend_uring_class.h]
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

constexpr unsigned kMaxBufferRing = 32768;  // kernel limit on ring entries

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

unsigned round_up_pow2(unsigned n) {
  unsigned p = 1;
  while (p < n && p < kMaxBufferRing) p <<= 1;
  return p;
}

std::string errno_text(int e) { return std::strerror(e); }

}  // namespace

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
      {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_CQSIZE, "DEFER_TASKRUN"},
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
    case ENOSYS: *error = "io_uring not available (seccomp or old kernel)"; break;
    case EPERM: *error = "io_uring disabled by kernel.io_uring_disabled"; break;
    case ENOMEM: *error = "memlock limit too low for the ring"; break;
    default: *error = "io_uring_queue_init failed: " + errno_text(-rc); break;
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

  void* ring_mem = ::mmap(nullptr, ring_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ring_mem == MAP_FAILED) {
    buf_ring_note_ = "no buffer ring (mmap: " + errno_text(errno) + ")";
    return;
  }
  void* slab = ::mmap(nullptr, slab_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
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

std::unique_ptr<backend> backend_uring_create(const machine_config& cfg, std::string* error) {
  auto b = std::make_unique<backend_uring>();
  if (b->init(cfg, error) < 0) return nullptr;
  return b;
}

std::string backend_uring_features(const backend* b) { return static_cast<const backend_uring*>(b)->features(); }

backend_uring_stats backend_uring_stats_get(const backend* b) { return static_cast<const backend_uring*>(b)->stats(); }

void backend_uring_disable_multishot(backend* b, bool accept, bool recv) {
  static_cast<backend_uring*>(b)->disable_multishot(accept, recv);
}

size_t backend_uring_released_pending(const backend* b) {
  return static_cast<const backend_uring*>(b)->released_pending();
}

}  // namespace mm::detail
