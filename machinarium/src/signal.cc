// Signals through a signalfd, delivered to the one machine that waits.
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>

#include "internal.h"

namespace mm {

namespace {
std::mutex g_signal_mutex;  // leaf lock: guards g_signal_set
sigset_t g_signal_set;
bool g_signal_set_ready = false;
}  // namespace

struct signal_state {
  std::unique_ptr<io> fd;
};

void signal_block(std::initializer_list<int> signals) {
  std::lock_guard lock(g_signal_mutex);
  if (!g_signal_set_ready) {
    sigemptyset(&g_signal_set);
    g_signal_set_ready = true;
  }
  for (int s : signals) sigaddset(&g_signal_set, s);
  pthread_sigmask(SIG_BLOCK, &g_signal_set, nullptr);
}

int signal_wait(millis timeout) {
  machine* m = detail::current_machine();
  if (!m->signals_) {
    sigset_t set;
    {
      std::lock_guard lock(g_signal_mutex);
      if (!g_signal_set_ready) return -EINVAL;
      set = g_signal_set;
    }
    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0) return -errno;
    auto st = new signal_state;
    st->fd = io::attach(fd);
    if (!st->fd) {
      ::close(fd);
      delete st;
      return -errno;
    }
    m->signals_ = st;
  }
  int64_t deadline = deadline_after(timeout);
  for (;;) {
    signalfd_siginfo info;
    ssize_t r = ::read(m->signals_->fd->fd(), &info, sizeof(info));
    if (r == static_cast<ssize_t>(sizeof(info))) return static_cast<int>(info.ssi_signo);
    if (r < 0 && errno != EAGAIN) return -errno;
    wait_status s = m->signals_->fd->wait_readable(millis_until(deadline));
    if (s == wait_status::Cancelled) return -ECANCELED;
    if (s == wait_status::TimedOut) return -ETIMEDOUT;
  }
}

namespace detail {
// Called by the machine when it ends, on its thread.
void signal_state_free(machine* m) {
  delete m->signals_;
  m->signals_ = nullptr;
}
}  // namespace detail

}  // namespace mm
