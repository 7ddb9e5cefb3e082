// An immutable value published by one thread and read by many without a lock
// on their hot path: the live settings today, the route tree tomorrow.
//
// snapshot_cell<T> holds the current `shared_ptr<const T>` and a generation
// counter. The writer (the pooler, on SIGHUP) builds a whole new T and
// publishes it: under `mutex_` it swaps the pointer and bumps the generation
// (a role change publishes too; served_role.h orders the two writers).
// Readers (client coroutines, the UDP loop, the cron, `stats`) keep their own
// snapshot_reader<T>: a copy of the shared_ptr and the generation it came
// with. refresh() costs one acquire load of the generation; only when it moved
// does the reader take `mutex_` to copy the new pointer. So a worker takes the
// lock once per reload, not once per request, and a batch of requests that
// refreshed once at its start runs on one snapshot from start to end, however
// long it takes (a blocking large-value read, a slow writer): the old T lives
// until its last reader lets go of it. Nothing ever modifies a published T.
//
// Lock: `mutex_` is a leaf. It is held only to copy or swap one shared_ptr;
// nothing else is taken, and no coroutine suspends, while it is held. The old
// T is released after the unlock (by whichever reader held it last).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

namespace ithaca::server {

template <class T>
class snapshot_cell {
 public:
  explicit snapshot_cell(std::shared_ptr<const T> first) : current_(std::move(first)) {}
  snapshot_cell(const snapshot_cell&) = delete;
  snapshot_cell& operator=(const snapshot_cell&) = delete;

  // Makes `next` the current value. [any thread; the server's writers (the
  // pooler's reload, the role monitor) serialize their read-modify-publish
  // under served_role's mutex, so neither overwrites the other's change]
  void publish(std::shared_ptr<const T> next) {
    std::shared_ptr<const T> old;
    {
      std::lock_guard lock(mutex_);
      old = std::exchange(current_, std::move(next));
      // Release: a reader that sees the new generation and then takes the
      // mutex is sure to copy the new pointer (the mutex alone would do; the
      // order keeps the lock-free check honest).
      generation_.fetch_add(1, std::memory_order_release);
    }
    // `old` is dropped here, outside the lock.
  }

  // The current value and its generation, under the lock. [any thread]
  std::shared_ptr<const T> load(uint64_t* generation = nullptr) const {
    std::lock_guard lock(mutex_);
    if (generation) *generation = generation_.load(std::memory_order_relaxed);
    return current_;
  }

  // Lock-free: has anything been published since `generation`? [any thread]
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mutex_;          // leaf; guards current_
  std::shared_ptr<const T> current_;  // [mutex_]
  std::atomic<uint64_t> generation_{1};
};

// One reader's cached snapshot. Owned by one coroutine (or one thread); not
// shared. The reference from get() stays valid until the next refresh().
template <class T>
class snapshot_reader {
 public:
  explicit snapshot_reader(const snapshot_cell<T>& cell) : cell_(&cell) { current_ = cell_->load(&generation_); }

  // Picks up a newer snapshot if one was published. True if it changed.
  bool refresh() {
    if (cell_->generation() == generation_) return false;
    current_ = cell_->load(&generation_);
    return true;
  }

  const T& get() const { return *current_; }
  const T* operator->() const { return current_.get(); }

 private:
  const snapshot_cell<T>* cell_;
  std::shared_ptr<const T> current_;
  uint64_t generation_ = 0;
};

}  // namespace ithaca::server
