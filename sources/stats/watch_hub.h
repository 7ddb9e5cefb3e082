// `watch`: memcached's log stream of server events (item fetches, stores,
// deletions, evictions, connection open/close) to client connections that
// asked for it. See INTERNALS.md, "watch".
//
// Producers are the worker threads (and whichever thread evicts): an event is
// formatted once into a line and pushed into the bounded byte_queue of every
// watcher that wants its kind. A push never blocks and never allocates: when a
// watcher's queue is full the line is dropped and counted on that watcher,
// which later prints memcached's "skipped=N" line before its next one. When
// nobody watches a kind, a producer pays one relaxed load (`watching`).
//
// Watchers: at most kMaxWatchers slots (memcached's WATCHER_LIMIT). A slot's
// queue is made on its first use and kept for the process's life, so a
// producer that read a slot just before its watcher left pushes into a queue
// that still exists; the next watcher of that slot ignores lines older than
// its registration (memcached's min_gid) and of kinds it did not ask for.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "machinarium.h"

namespace ithaca::stats::watch {

// memcached's LOG_* bits (logger.h), so the kinds combine the same way.
enum kind : uint32_t {
  kSysEvents = 1u << 1,
  kFetchers = 1u << 2,
  kMutations = 1u << 3,
  kConnEvents = 1u << 5,
  kEvictions = 1u << 6,
  kRawCmds = 1u << 9,
  kProxyReqs = 1u << 10,
  kProxyEvents = 1u << 11,
  kProxyUser = 1u << 12,
  kDeletions = 1u << 13,
};

inline constexpr std::size_t kMaxWatchers = 20;
// Each watcher's queue (lines not yet taken by its coroutine) and, apart,
// its send buffer hold at most this many bytes each.
inline constexpr std::size_t kWatcherBufferBytes = 64 * 1024;
// The longest line: a 250-byte key URI-encoded (750) and the fields.
inline constexpr std::size_t kMaxLine = 1024;

// A record in a watcher's queue: this header, then the line.
struct record_header {
  uint64_t gid;
  uint32_t kind;
  uint32_t pad;
};

class hub {
 public:
  static hub& instance();

  // The one check on the data path. [any thread; relaxed load]
  bool watching(uint32_t k) const { return (mask_.load(std::memory_order_relaxed) & k) != 0; }
  uint32_t mask() const { return mask_.load(std::memory_order_relaxed); }

  // Stamps `body` ("type=... key=...") with ts= and gid= and offers the line
  // to every watcher of `k`. [any thread; lock-free, never blocks]
  void emit(uint32_t k, std::string_view body);

  // A new watcher of `kinds`: its slot, or -1 when kMaxWatchers watch
  // already. [any thread; takes mutex_ (leaf) briefly]
  int add(uint32_t kinds);
  void remove(int slot);

  // The watcher's side of its slot. [the watcher's coroutine]
  mm::byte_queue& queue(int slot) { return *slots_[slot].queue; }
  uint64_t min_gid(int slot) const { return slots_[slot].min_gid.load(std::memory_order_relaxed); }
  uint64_t take_skipped(int slot) { return slots_[slot].skipped.exchange(0, std::memory_order_relaxed); }
  void count_sent() { sent_.fetch_add(1, std::memory_order_relaxed); }

  // memcached's log_* stats. [any thread]
  uint64_t watchers() const { return count_.load(std::memory_order_relaxed); }
  uint64_t written() const { return written_.load(std::memory_order_relaxed); }
  uint64_t skipped() const { return skipped_.load(std::memory_order_relaxed); }
  uint64_t sent() const { return sent_.load(std::memory_order_relaxed); }

 private:
  struct slot {
    std::atomic<uint32_t> kinds{0};  // 0: free. Released after `queue` and `min_gid` are set.
    std::atomic<uint64_t> min_gid{0};
    std::atomic<uint64_t> skipped{0};       // lines dropped since the last one taken
    std::unique_ptr<mm::byte_queue> queue;  // made once under mutex_, never freed nor replaced
  };
  void update_mask();  // [mutex_]

  std::atomic<uint32_t> mask_{0};  // OR of every slot's kinds
  std::atomic<uint64_t> gid_{0};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> written_{0};
  std::atomic<uint64_t> skipped_{0};
  std::atomic<uint64_t> sent_{0};
  std::mutex mutex_;  // leaf: add / remove only, never on the data path
  std::array<slot, kMaxWatchers> slots_;
};

}  // namespace ithaca::stats::watch
