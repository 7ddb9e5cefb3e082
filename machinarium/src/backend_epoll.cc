// The epoll backend: every attached fd is registered once, edge-triggered,
// for input and output; io.cc retries its syscall until EAGAIN (or, on a
// stream socket, until a short read), so an edge is never needed twice.
// notify() writes an eventfd that is also registered.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "backend.h"

namespace mm::detail {

namespace {

class epoll_backend final : public backend {
 public:
  ~epoll_backend() override {
    if (event_fd_ >= 0) ::close(event_fd_);
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
  }

  bool init(std::string* error) {
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    event_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll_fd_ < 0 || event_fd_ < 0) {
      *error = std::string("epoll/eventfd: ") + std::strerror(errno);
      return false;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;  // level-triggered: drained in wait()
    ev.data.ptr = nullptr;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, event_fd_, &ev) < 0) {
      *error = std::string("epoll_ctl eventfd: ") + std::strerror(errno);
      return false;
    }
    return true;
  }

  const char* name() const override { return "epoll"; }

  int attach(io_state* s) override {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.ptr = s;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, s->fd, &ev) < 0) return -errno;
    s->stream = fd_is_stream_socket(s->fd);
    // Optimistic: the first read tries the syscall (data may already wait).
    s->readable = true;
    return 0;
  }

  void cancel(io_state*) override {}  // nothing is ever in flight

  void release(io_state* s) override {
    if (s->fd >= 0) epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, s->fd, nullptr);
    delete s;
  }

  ssize_t try_recv(io_state* s, void* buf, size_t len) override {
    if (stream_known_drained(s, len)) return -EAGAIN;  // the next edge wakes the reader
    ssize_t r = ::read(s->fd, buf, len);
    if (r >= 0) {
      note_stream_read(s, static_cast<size_t>(r), len);
      return r;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      s->readable = false;
      return -EAGAIN;
    }
    return -errno;
  }

  int try_accept(io_state* s, sockaddr_storage* peer, socklen_t* peer_len) override {
    socklen_t len = sizeof(sockaddr_storage);
    int fd = ::accept4(s->fd, reinterpret_cast<sockaddr*>(peer), peer ? &len : nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      if (peer_len) *peer_len = len;
      return fd;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      s->readable = false;
      return -EAGAIN;
    }
    return -errno;
  }

  ssize_t try_writev(io_state* s, const iovec* iov, int count) override {
    msghdr msg{};
    msg.msg_iov = const_cast<iovec*>(iov);
    msg.msg_iovlen = static_cast<size_t>(count);
    ssize_t r = ::sendmsg(s->fd, &msg, MSG_NOSIGNAL);
    if (r < 0 && errno == ENOTSOCK) r = ::writev(s->fd, iov, count);
    if (r >= 0) return r;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      s->writable = false;
      return -EAGAIN;
    }
    return -errno;
  }

  ssize_t try_recvmsg(io_state* s, msghdr* msg) override {
    ssize_t r = ::recvmsg(s->fd, msg, 0);
    if (r >= 0) return r;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      s->readable = false;
      return -EAGAIN;
    }
    return -errno;
  }

  ssize_t try_sendmsg(io_state* s, const msghdr* msg) override {
    ssize_t r = ::sendmsg(s->fd, msg, MSG_NOSIGNAL);
    if (r >= 0) return r;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      s->writable = false;
      return -EAGAIN;
    }
    return -errno;
  }

  void arm(io_state*, uint32_t) override {}  // registered edge-triggered for both at attach

  int wait(int64_t timeout_ns) override {
    timespec ts;
    timespec* tsp = nullptr;
    if (timeout_ns >= 0) {
      ts.tv_sec = timeout_ns / 1000000000;
      ts.tv_nsec = timeout_ns % 1000000000;
      tsp = &ts;
    }
    int n = epoll_pwait2(epoll_fd_, events_, kMaxEvents, tsp, nullptr);
    if (n < 0 && errno == ENOSYS) {
      int ms = timeout_ns < 0 ? -1 : static_cast<int>((timeout_ns + 999999) / 1000000);
      n = epoll_wait(epoll_fd_, events_, kMaxEvents, ms);
    }
    if (n < 0) return 0;  // EINTR
    for (int i = 0; i < n; i++) {
      auto* s = static_cast<io_state*>(events_[i].data.ptr);
      if (!s) {
        uint64_t value;
        while (::read(event_fd_, &value, sizeof(value)) > 0) {}
        continue;
      }
      io_state_ready(s, events_[i].events);
    }
    return n;
  }

  void notify() override {
    uint64_t one = 1;
    ssize_t r = ::write(event_fd_, &one, sizeof(one));
    (void)r;  // EAGAIN means the counter is already non-zero: still woken
  }

 private:
  static constexpr int kMaxEvents = 256;
  int epoll_fd_ = -1;
  int event_fd_ = -1;
  epoll_event events_[kMaxEvents];
};

}  // namespace

std::unique_ptr<backend> backend_epoll_create(std::string* error) {
  auto b = std::make_unique<epoll_backend>();
  if (!b->init(error)) return nullptr;
  return b;
}

}  // namespace mm::detail
