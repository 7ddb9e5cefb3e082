#include "watch_hub.h"

#include <sys/time.h>

#include <cstdio>
#include <cstring>

namespace ithaca::stats::watch {

hub& hub::instance() {
  static hub h;
  return h;
}

void hub::emit(uint32_t k, std::string_view body) {
  if (!watching(k)) return;
  const uint64_t gid = gid_.fetch_add(1, std::memory_order_relaxed) + 1;
  timeval tv{};
  gettimeofday(&tv, nullptr);
  // Header, "ts=... gid=... ", body, "\n": built on this thread's stack.
  char buf[sizeof(record_header) + kMaxLine];
  const record_header h{gid, k, 0};
  std::memcpy(buf, &h, sizeof h);
  char* line = buf + sizeof h;
  const std::size_t room = kMaxLine - 1;  // keeps one byte for the newline
  int n = std::snprintf(line, room, "ts=%lld.%d gid=%llu ", static_cast<long long>(tv.tv_sec),
                        static_cast<int>(tv.tv_usec), static_cast<unsigned long long>(gid));
  if (n < 0) return;
  std::size_t len = std::min<std::size_t>(static_cast<std::size_t>(n), room);
  const std::size_t take = std::min(body.size(), room - len);
  std::memcpy(line + len, body.data(), take);
  len += take;
  line[len++] = '\n';
  const std::string_view rec(buf, sizeof h + len);
  written_.fetch_add(1, std::memory_order_relaxed);
  for (slot& s : slots_) {
    // Acquire: a non-zero kinds publishes the slot's queue.
    if ((s.kinds.load(std::memory_order_acquire) & k) == 0) continue;
    if (!s.queue->try_push(rec)) {
      s.skipped.fetch_add(1, std::memory_order_relaxed);
      skipped_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

int hub::add(uint32_t kinds) {
  if (kinds == 0) kinds = kFetchers;
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    slot& s = slots_[i];
    if (s.kinds.load(std::memory_order_relaxed) != 0) continue;
    if (!s.queue) s.queue = std::make_unique<mm::byte_queue>(kWatcherBufferBytes);
    // Lines stamped before this (a producer late on the slot's last watcher)
    // are not ours. Takes a gid, as memcached's logger_add_watcher does.
    s.min_gid.store(gid_.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    s.skipped.store(0, std::memory_order_relaxed);
    s.kinds.store(kinds, std::memory_order_release);
    count_.fetch_add(1, std::memory_order_relaxed);
    update_mask();
    return static_cast<int>(i);
  }
  return -1;
}

void hub::remove(int slot_index) {
  std::lock_guard lock(mutex_);
  slot& s = slots_[static_cast<std::size_t>(slot_index)];
  if (s.kinds.exchange(0, std::memory_order_relaxed) == 0) return;
  count_.fetch_sub(1, std::memory_order_relaxed);
  update_mask();
}

void hub::update_mask() {
  uint32_t m = 0;
  for (const slot& s : slots_) m |= s.kinds.load(std::memory_order_relaxed);
  mask_.store(m, std::memory_order_relaxed);
}

}  // namespace ithaca::stats::watch
