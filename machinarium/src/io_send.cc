// io::write_batched(): a write whose syscall is shared with the loop turn's
// other writes (io_uring SEND requests submitted by the loop's own
// io_uring_enter). Runs on the machine owning the io. Kept apart from io.cc's
// direct try-then-wait path, which the epoll backend and write() keep.
#include <cerrno>

#include "internal.h"

namespace mm {

ssize_t io::write_batched(const void* buf, size_t len, millis timeout) {
  if (!state_) return -EBADF;
  if (len == 0) return 0;
  int64_t target = state_->owner->queue_send(state_, buf, len);
  if (target == -EOPNOTSUPP) return write(buf, len, timeout);
  if (target < 0) return target;
  int64_t deadline = deadline_after(timeout);
  const detail::send_queue& q = *state_->sendq;
  // Each completion wakes the write waiter; a short send was re-submitted
  // by the backend from where it stopped, so only the count matters here.
  while (q.sent < static_cast<uint64_t>(target) && q.error == 0) {
    call k;
    state_->write_waiter = &k;
    wait_status s = k.wait_until(deadline);
    state_->write_waiter = nullptr;
    if (s != wait_status::Ok) return s == wait_status::Cancelled ? -ECANCELED : -ETIMEDOUT;
  }
  if (q.sent >= static_cast<uint64_t>(target)) return static_cast<ssize_t>(len);
  return q.error;
}

}  // namespace mm
