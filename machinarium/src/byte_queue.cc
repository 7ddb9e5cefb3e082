// The byte queue: a multi-producer single-consumer ring of variable-size
// records (see machinarium.h). Layout: every record starts at an 8-byte
// aligned offset with one 64-bit header word
//   bits 0..31  payload size      bit 32  published      bit 33  padding
// followed by the payload, rounded up to 8 bytes. Positions (head_, tail_)
// count bytes since construction and never wrap; the offset is pos & mask_.
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "internal.h"

namespace mm {

namespace {
constexpr uint64_t kPublished = uint64_t{1} << 32;
constexpr uint64_t kPadding = uint64_t{1} << 33;
constexpr size_t kHeader = 8;

size_t slot_of(size_t size) { return kHeader + ((size + 7) & ~size_t{7}); }

size_t round_capacity(size_t n) {
  size_t c = 4096;
  while (c < n) c <<= 1;
  return c;
}
}  // namespace

byte_queue::byte_queue(size_t capacity) : capacity_(round_capacity(capacity)), mask_(capacity_ - 1) {
  // calloc: every header word starts at 0 (not published). A failure here is
  // start-up memory exhaustion, which machinarium treats as fatal.
  ring_ = static_cast<uint64_t*>(std::calloc(capacity_ / 8, 8));
  event_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (!ring_ || event_fd_ < 0) {
    detail::log(log_level::Error, "byte_queue: out of memory or descriptors at start-up");
    std::abort();
  }
}

byte_queue::~byte_queue() {
  std::free(ring_);
  ::close(event_fd_);
}

uint64_t byte_queue::header_at(size_t offset) const {
  return std::atomic_ref<uint64_t>(ring_[offset / 8]).load(std::memory_order_acquire);
}

size_t byte_queue::used() const {
  uint64_t tail = tail_.load(std::memory_order_acquire);
  uint64_t head = head_.load(std::memory_order_acquire);
  return head > tail ? head - tail : 0;
}

bool byte_queue::try_reserve(size_t size, reservation& r) {
  if (size > max_record()) return false;
  const size_t slot = slot_of(size);
  uint64_t head = head_.load(std::memory_order_relaxed);
  size_t pad;
  for (;;) {
    const uint64_t tail = tail_.load(std::memory_order_acquire);
    if (tail > head) {  // our head is older than the consumer's progress
      head = head_.load(std::memory_order_relaxed);
      continue;
    }
    const size_t offset = head & mask_;
    pad = offset + slot > capacity_ ? capacity_ - offset : 0;
    if (head + pad + slot - tail > capacity_) return false;  // full: the caller's policy
    if (head_.compare_exchange_weak(head, head + pad + slot, std::memory_order_acq_rel, std::memory_order_relaxed))
      break;
  }
  if (pad) {
    // The ring's end is skipped: a published padding record the consumer steps over.
    std::atomic_ref<uint64_t>(ring_[(head & mask_) / 8])
        .store(kPublished | kPadding | (pad - kHeader), std::memory_order_release);
  }
  const size_t offset = (head + pad) & mask_;
  r.header = offset;
  r.data = reinterpret_cast<char*>(ring_) + offset + kHeader;
  r.size = size;
  r.end = head + pad + slot;
  return true;
}

void byte_queue::commit(const reservation& r) {
  // seq_cst store, then seq_cst load of sleeping_: with the consumer's
  // seq_cst store of sleeping_ then load of this header (Dekker), at least
  // one side sees the other, so a record is never left unseen by a sleeper.
  std::atomic_ref<uint64_t>(ring_[r.header / 8]).store(kPublished | r.size, std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_seq_cst) && sleeping_.exchange(false, std::memory_order_seq_cst)) {
    uint64_t one = 1;
    // An eventfd write cannot block (the counter is far from its limit: the
    // consumer drains it after every wait) and takes no user-space lock.
    ssize_t n = ::write(event_fd_, &one, sizeof one);
    (void)n;
    wakeups_.fetch_add(1, std::memory_order_relaxed);
  }
}

bool byte_queue::try_push(std::string_view record) {
  reservation r;
  if (!try_reserve(record.size(), r)) return false;
  if (!record.empty()) std::memcpy(r.data, record.data(), record.size());
  commit(r);
  return true;
}

// Consumer only: zeroes the slot (so stale bytes never look like a published
// header to a later lap), then hands the space back to the producers.
void byte_queue::release(size_t offset, size_t slot) {
  std::memset(reinterpret_cast<char*>(ring_) + offset, 0, slot);
  tail_.store(tail_.load(std::memory_order_relaxed) + slot, std::memory_order_release);
}

bool byte_queue::readable() {
  for (;;) {
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    const size_t offset = tail & mask_;
    const uint64_t h = header_at(offset);
    if (!(h & kPublished)) return false;
    if (!(h & kPadding)) return true;
    release(offset, kHeader + (h & 0xffffffffu));
  }
}

bool byte_queue::try_peek(std::string_view& record) {
  if (!readable()) return false;
  const size_t offset = tail_.load(std::memory_order_relaxed) & mask_;
  const uint64_t h = header_at(offset);
  record = std::string_view(reinterpret_cast<const char*>(ring_) + offset + kHeader, h & 0xffffffffu);
  return true;
}

void byte_queue::pop() {
  const size_t offset = tail_.load(std::memory_order_relaxed) & mask_;
  const uint64_t h = header_at(offset);
  if (!(h & kPublished)) return;  // nothing peeked
  release(offset, slot_of(h & 0xffffffffu));
}

byte_queue::reader::reader(byte_queue& q) : queue_(q) {
  int fd = ::dup(q.event_fd_);
  if (fd >= 0) event_ = io::attach(fd);
  if (!event_) {
    if (fd >= 0) ::close(fd);
    detail::log(log_level::Error, "byte_queue: cannot attach the consumer's eventfd");
  }
}

byte_queue::reader::~reader() = default;

// The consumer announces it will sleep, looks once more (a record published
// before the announcement was seen by nobody else), and only then waits on the
// eventfd; whoever publishes next and sees the announcement writes it.
wait_status byte_queue::reader::wait(millis timeout) {
  const int64_t deadline = deadline_after(timeout);
  for (;;) {
    if (coroutine_cancelled()) return wait_status::Cancelled;
    if (queue_.readable()) return wait_status::Ok;
    if (!event_) {  // no eventfd (descriptors exhausted): poll every millisecond
      if (millis_until(deadline) == 0) return wait_status::TimedOut;
      if (sleep(1) == wait_status::Cancelled) return wait_status::Cancelled;
      continue;
    }
    // Counted as announced (a producer may wake it even if the re-check
    // below finds a record and the sleep is called off).
    queue_.sleeps_.store(queue_.sleeps_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    queue_.sleeping_.store(true, std::memory_order_seq_cst);
    if (queue_.readable()) {
      queue_.sleeping_.store(false, std::memory_order_relaxed);
      return wait_status::Ok;
    }
    wait_status s = event_->wait_readable(millis_until(deadline));
    uint64_t count;
    ssize_t n = ::read(event_->fd(), &count, sizeof count);  // drain; EAGAIN if nobody wrote
    (void)n;
    queue_.sleeping_.store(false, std::memory_order_relaxed);
    if (s == wait_status::Cancelled) return s;
    if (s == wait_status::TimedOut) return queue_.readable() ? wait_status::Ok : s;
  }
}

}  // namespace mm
