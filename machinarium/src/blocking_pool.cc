// A small pool of plain threads for calls that cannot be made asynchronous
// (getaddrinfo, file I/O), so that no machine ever blocks. The queue is
// bounded; when it is full blocking_call() refuses at once (TimedOut) and logs.
#include <netdb.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "internal.h"

namespace mm {

namespace {

constexpr size_t kThreads = 4;
constexpr size_t kQueueBound = 4096;

// Whether the caller still waits in blocking_call. While it does, its
// coroutine is suspended on its machine, so the machine is alive: the wake
// is posted under `mu` only then. A caller that left (timed out, cancelled,
// its machine stopping) is not woken: posting to a machine that may have
// stopped and been freed crashed the process at shutdown.
struct completion {
  std::mutex mu;  // leaf lock: guards waiting, held across the post
  bool waiting = true;
};

struct job {
  std::function<void()> fn;
  machine* owner;
  coroutine_id coroutine;
  uint64_t sequence;
  std::shared_ptr<completion> done;
};

class blocking_pool {
 public:
  bool submit(job j) {
    std::call_once(started_, [this] {
      for (size_t i = 0; i < kThreads; i++) {
        std::thread([this] { work(); }).detach();  // lives as long as the process
      }
    });
    {
      std::lock_guard lock(mutex_);
      if (queue_.size() >= kQueueBound) return false;
      queue_.push_back(std::move(j));
    }
    ready_.notify_one();
    return true;
  }

 private:
  void work() {
    pthread_setname_np(pthread_self(), "mm-blocking");
    for (;;) {
      job j;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return !queue_.empty(); });
        j = std::move(queue_.front());
        queue_.pop_front();
      }
      j.fn();
      j.fn = nullptr;
      std::lock_guard lock(j.done->mu);
      if (j.done->waiting) detail::post_wake(j.owner, j.coroutine, j.sequence);
    }
  }

  std::once_flag started_;
  std::mutex mutex_;  // leaf lock: guards queue_
  std::condition_variable ready_;
  std::deque<job> queue_;
};

blocking_pool& pool() {
  static auto* p = new blocking_pool;  // never destroyed: its threads outlive main
  return *p;
}

}  // namespace

wait_status blocking_call(std::function<void()> fn, millis timeout) {
  remote_waiter waiter;
  machine* m = detail::current_machine();
  detail::coroutine* c = detail::current_coroutine();
  if (c->cancelled) return wait_status::Cancelled;
  auto done = std::make_shared<completion>();
  if (!pool().submit(job{std::move(fn), m, c->id, c->call_sequence + 1, done})) {
    detail::log(log_level::Warn, "blocking pool queue full; call refused");
    return wait_status::TimedOut;
  }
  const wait_status st = waiter.wait_until(deadline_after(timeout));
  std::lock_guard lock(done->mu);  // a wake being posted finishes first
  done->waiting = false;
  return st;
}

bool resolve(const std::string& host, const std::string& port, address& out, millis timeout, std::string* error) {
  struct result {
    int rc = 0;
    address addr;
  };
  auto r = std::make_shared<result>();
  wait_status s = blocking_call(
      [r, host, port] {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* list = nullptr;
        r->rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &list);
        if (r->rc == 0 && list) {
          std::memcpy(&r->addr.storage, list->ai_addr, list->ai_addrlen);
          r->addr.length = list->ai_addrlen;
        }
        if (list) freeaddrinfo(list);
      },
      timeout);
  if (s != wait_status::Ok) {
    if (error) *error = std::string("resolve ") + host + ": " + to_string(s);
    return false;
  }
  if (r->rc != 0) {
    if (error) *error = std::string("resolve ") + host + ": " + gai_strerror(r->rc);
    return false;
  }
  out = r->addr;
  return true;
}

}  // namespace mm
