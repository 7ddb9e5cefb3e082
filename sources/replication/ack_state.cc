#include "ack_state.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdlib>

#include <spdlog/spdlog.h>

namespace ithaca::replication {

ack_state::ack_state(unsigned workers, repl_counters& counters)
    : workers_(workers), wakes_(std::make_unique<worker_wake[]>(workers)), counters_(counters) {
  for (unsigned i = 0; i < workers_; i++) {
    wakes_[i].event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wakes_[i].event_fd < 0) {  // start-up: descriptors exhausted
      spdlog::critical("replication ack: cannot make an eventfd");
      std::abort();
    }
  }
}

ack_state::~ack_state() {
  for (unsigned i = 0; i < workers_; i++) ::close(wakes_[i].event_fd);
}

void ack_state::confirm(uint64_t position) noexcept {
  uint64_t cur = confirmed_.load(std::memory_order_relaxed);
  while (cur < position &&
         !confirmed_.compare_exchange_weak(cur, position, std::memory_order_seq_cst, std::memory_order_relaxed)) {}
  if (cur >= position) return;  // nothing new
  for (unsigned i = 0; i < workers_; i++) {
    worker_wake& w = wakes_[i];
    if (!w.sleeping.load(std::memory_order_seq_cst) || w.wanted.load(std::memory_order_relaxed) > position) continue;
    if (!w.sleeping.exchange(false, std::memory_order_seq_cst)) continue;  // another wake got there first
    uint64_t one = 1;
    ssize_t n = ::write(w.event_fd, &one, sizeof one);  // never blocks: the worker drains it
    (void)n;
    wakeups_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace ithaca::replication
