// Per-prefix statistics: memcached's `stats detail on|off|dump`. A key's
// prefix is what comes before its first delimiter (':', or memcached's -D
// character; keys without one are not counted, as in memcached); for each prefix, gets, hits, sets and deletes of
// the classic text and binary commands (meta commands are not counted, as in
// memcached). Off by default (-D turns it on at start); `stats reset` clears
// the table.
//
// Threads: any worker records and dumps. Lock: `mutex_`, a leaf taken only
// when detail is on (one relaxed load otherwise), never under a bucket lock.
// Bound: unlike memcached's table, which grows with every new prefix a
// client invents, it holds at most kMaxPrefixes; a new prefix beyond that is
// not recorded and counted in `dropped()`.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ithaca::stats {

class prefix_stats {
 public:
  static constexpr size_t kMaxPrefixes = 4096;

  // The process's table (memcached keeps one per process too).
  static prefix_stats& instance();

  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  void set_enabled(bool on) { enabled_.store(on, std::memory_order_relaxed); }
  // memcached's -D. [start-up, before any worker; read relaxed by every record]
  void set_delimiter(char c) { delimiter_.store(c, std::memory_order_relaxed); }
  char delimiter() const { return delimiter_.load(std::memory_order_relaxed); }

  // No-ops while detail is off (checked inline: every request asks).
  void record_get(std::string_view key, bool hit) {
    if (enabled()) count_get(key, hit);
  }
  void record_set(std::string_view key) {
    if (enabled()) count_set(key);
  }
  void record_delete(std::string_view key) {
    if (enabled()) count_delete(key);
  }

  // "PREFIX <p> get <n> hit <n> set <n> del <n>\r\n" per prefix (sorted, so
  // the output is stable), then "END\r\n".
  std::string dump();
  void clear();
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  void count_get(std::string_view key, bool hit);
  void count_set(std::string_view key);
  void count_delete(std::string_view key);
  struct counts {
    uint64_t gets = 0, hits = 0, sets = 0, deletes = 0;
  };
  // The prefix's counts, created if there is room; null otherwise. mutex_ held.
  counts* find(std::string_view key);

  std::atomic<bool> enabled_{false};
  std::atomic<char> delimiter_{':'};  // memcached's default
  std::atomic<uint64_t> dropped_{0};
  std::mutex mutex_;
  std::unordered_map<std::string, counts> table_;  // [mutex_]
};

}  // namespace ithaca::stats
