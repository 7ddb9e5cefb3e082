// Socket operations for coroutines: try the backend's non-blocking attempt,
// and on -EAGAIN suspend on the fd's waiter until the backend says it may be
// ready, within the caller's deadline. Runs on the machine owning the io.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <sys/epoll.h>

#include "internal.h"

namespace mm {

namespace detail {

void io_state_ready(io_state* s, uint32_t events) {
  if (events & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP)) {
    s->readable = true;
    if (s->read_waiter) {
      s->read_waiter->wake();
    } else if (s->on_input) {
      void (*fn)(void*) = s->on_input;
      s->on_input = nullptr;
      fn(s->on_input_arg);
    }
  }
  if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) {
    s->writable = true;
    if (s->write_waiter) s->write_waiter->wake();
  }
}

void io_state_drained(io_state* s) {
  if (s->drain_waiter) s->drain_waiter->wake();
}

namespace {
int errno_of(wait_status s) { return s == wait_status::Cancelled ? -ECANCELED : -ETIMEDOUT; }

// Suspends on one of the fd's waiter slots.
wait_status wait_on(call*& slot, int64_t deadline) {
  call k;
  slot = &k;
  wait_status s = k.wait_until(deadline);
  slot = nullptr;
  return s;
}
}  // namespace

}  // namespace detail

using detail::io_state;

std::unique_ptr<io> io::attach(int fd) {
  machine* m = detail::current_machine();
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return nullptr;
  auto* s = new io_state;
  s->fd = fd;
  s->owner = m->backend_.get();
  int rc = s->owner->attach(s);
  if (rc < 0) {
    delete s;
    errno = -rc;
    return nullptr;
  }
  return std::unique_ptr<io>(new io(s));
}

io::~io() { close(); }

int io::fd() const { return state_ ? state_->fd : -1; }

ssize_t io::read(void* buf, size_t len, millis timeout) {
  if (!state_) return -EBADF;
  int64_t deadline = deadline_after(timeout);
  for (;;) {
    ssize_t r = state_->owner->try_recv(state_, buf, len);
    if (r != -EAGAIN) return r;
    wait_status s = detail::wait_on(state_->read_waiter, deadline);
    if (s != wait_status::Ok) {
      return detail::errno_of(s);
    }
  }
}

ssize_t io::try_read(void* buf, size_t len) {
  if (!state_) return -EBADF;
  return state_->owner->try_recv(state_, buf, len);
}

ssize_t io::read_exact(void* buf, size_t len, millis timeout) {
  int64_t deadline = deadline_after(timeout);
  size_t done = 0;
  while (done < len) {
    ssize_t r = read(static_cast<char*>(buf) + done, len - done, millis_until(deadline));
    if (r == 0) return -ECONNRESET;
    if (r < 0) return r;
    done += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(done);
}

ssize_t io::write(const void* buf, size_t len, millis timeout) {
  iovec v{const_cast<void*>(buf), len};
  return writev(&v, 1, timeout);
}

ssize_t io::writev(const iovec* iov_in, int count, millis timeout) {
  if (!state_) return -EBADF;
  int64_t deadline = deadline_after(timeout);
  // Work on a copy so a partial write can advance it.
  iovec local[64];
  std::unique_ptr<iovec[]> heap;
  iovec* iov = local;
  if (count > 64) {
    heap.reset(new iovec[count]);
    iov = heap.get();
  }
  size_t total = 0;
  for (int i = 0; i < count; i++) {
    iov[i] = iov_in[i];
    total += iov_in[i].iov_len;
  }
  size_t written = 0;
  int first = 0;
  while (written < total) {
    ssize_t r = state_->owner->try_writev(state_, iov + first, std::min(count - first, 1024));
    if (r == -EAGAIN) {
      wait_status s = detail::wait_on(state_->write_waiter, deadline);
      if (s != wait_status::Ok) {
        return detail::errno_of(s);
      }
      continue;
    }
    if (r < 0) return r;
    written += static_cast<size_t>(r);
    size_t n = static_cast<size_t>(r);
    while (first < count && n >= iov[first].iov_len) {
      n -= iov[first].iov_len;
      first++;
    }
    if (first < count && n) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + n;
      iov[first].iov_len -= n;
    }
  }
  return static_cast<ssize_t>(written);
}

int io::accept(millis timeout, sockaddr_storage* peer, socklen_t* peer_len) {
  if (!state_) return -EBADF;
  int64_t deadline = deadline_after(timeout);
  for (;;) {
    int r = state_->owner->try_accept(state_, peer, peer_len);
    if (r != -EAGAIN) return r;
    wait_status s = detail::wait_on(state_->read_waiter, deadline);
    // A cancelled accept loop means nobody here takes connections any more:
    // the kernel must stop taking them for us (io_uring's multishot accept
    // would go on). A timeout leaves it armed: the caller accepts again.
    if (s == wait_status::Cancelled) state_->owner->stop_accept(state_);
    if (s != wait_status::Ok) return detail::errno_of(s);
  }
}

int io::stop_accepting(millis timeout, std::vector<int>* accepted) {
  if (!state_) return -EBADF;
  if (state_->read_waiter) return -EBUSY;  // an accept() in progress: cancel it first
  state_->owner->stop_accept(state_);
  const int64_t deadline = deadline_after(timeout);
  while (!state_->owner->accept_stopped(state_)) {
    wait_status s = detail::wait_on(state_->read_waiter, deadline);
    if (s != wait_status::Ok) return detail::errno_of(s);
  }
  for (; !state_->accepted.empty(); state_->accepted.pop_front()) accepted->push_back(state_->accepted.front());
  return 0;
}

ssize_t io::recvmsg(msghdr* msg, millis timeout) {
  if (!state_) return -EBADF;
  int64_t deadline = deadline_after(timeout);
  for (;;) {
    ssize_t r = state_->owner->try_recvmsg(state_, msg);
    if (r != -EAGAIN) return r;
    wait_status s = detail::wait_on(state_->read_waiter, deadline);
    if (s != wait_status::Ok) return detail::errno_of(s);
  }
}

ssize_t io::sendmsg(const msghdr* msg, millis timeout) {
  if (!state_) return -EBADF;
  int64_t deadline = deadline_after(timeout);
  for (;;) {
    ssize_t r = state_->owner->try_sendmsg(state_, msg);
    if (r != -EAGAIN) return r;
    wait_status s = detail::wait_on(state_->write_waiter, deadline);
    if (s != wait_status::Ok) return detail::errno_of(s);
  }
}

wait_status io::wait_readable(millis timeout) {
  if (!state_) return wait_status::Cancelled;
  state_->owner->arm(state_, EPOLLIN);
  return detail::wait_on(state_->read_waiter, deadline_after(timeout));
}

wait_status io::wait_writable(millis timeout) {
  if (!state_) return wait_status::Cancelled;
  state_->owner->arm(state_, EPOLLOUT);
  return detail::wait_on(state_->write_waiter, deadline_after(timeout));
}

int io::detach() {
  if (!state_ || state_->read_waiter || state_->write_waiter || !state_->rx.empty()) return -1;
  // Bytes of write_batched() not yet sent would be lost with the fd.
  if (state_->sendq && state_->sendq->pending()) return -1;
  if (state_->inflight > 0) {
    // io_uring: requests in flight still refer to the fd; cancel and wait for
    // their completions so nothing consumes data after the fd has moved on.
    state_->owner->cancel(state_);
    int64_t deadline = deadline_after(1000);
    while (state_->inflight > 0) {
      if (detail::wait_on(state_->drain_waiter, deadline) != wait_status::Ok) return -1;
    }
    if (!state_->rx.empty()) return -1;
  }
  int fd = state_->fd;
  state_->on_input = nullptr;
  state_->released = true;
  state_->owner->release(state_);  // stops watching; does not close the fd
  state_ = nullptr;
  return fd;
}

// Must not be called while another coroutine waits on this io: cancel that
// coroutine instead (its wait returns -ECANCELED) and let it close.
void io::close() {
  if (!state_) return;
  int fd = state_->fd;
  state_->on_input = nullptr;
  state_->released = true;
  state_->owner->release(state_);  // the backend frees the state when safe
  state_ = nullptr;
  if (fd >= 0) ::close(fd);
}

}  // namespace mm
