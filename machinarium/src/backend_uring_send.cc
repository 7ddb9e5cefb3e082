// The io_uring backend, its batched sends: io::write_batched()'s queue as one SEND per
// socket, prepared here and submitted with the loop's next io_uring_enter. [the machine
// thread]
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

// A send queue's buffer above this is freed rather than kept for reuse once
// it has been sent.
constexpr size_t kSendKeep = 64 * 1024;

}  // namespace

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

}  // namespace mm::detail
