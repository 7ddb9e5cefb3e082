// Server-wide statistics and the few settings a client may change, for the
// server commands (server_commands.h): `stats`, `verbosity`, `cache_memlimit`.
// Implemented by the server (server/server_stats.cc). Called from a worker
// coroutine; implementations only read counters and store atomics.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace ithaca::stats {

using stat_lines = std::vector<std::pair<std::string, std::string>>;

// One `stats` line: text as it is, a number in decimal.
template <class V>
void add_stat(stat_lines& out, const char* name, const V& value) {
  if constexpr (std::is_convertible_v<V, std::string>) {
    out.emplace_back(name, std::string(value));
  } else {
    out.emplace_back(name, std::to_string(value));
  }
}

class stats_provider {
 public:
  virtual ~stats_provider() = default;
  // Fills `out` for `stats <arg>` ("" = general stats, "settings", "items",
  // "slabs", "conns", "pools", "servers", ...). False if `arg` is not a group.
  virtual bool collect(std::string_view arg, stat_lines& out) = 0;
  virtual void reset() = 0;  // `stats reset`
  virtual void set_verbosity(uint32_t level) = 0;
  // What `verbosity N` last set (0 at start).
  virtual uint32_t verbosity() const { return 0; }
  // `cache_memlimit`: the local store's live memory limit (no effect
  // without a store). False if the store cannot grow to it (its item
  // region's reservation: memcached's "out of bounds or unable to adjust").
  virtual bool set_memory_limit(uint64_t bytes) = 0;
  // The largest of memcached's size classes the store counts items by
  // (store/slab_classes.h), for `slabs reassign`; 0: none.
  virtual unsigned slab_class_largest() const { return 0; }
  // memcached's `refresh_certs`: re-reads the TLS certificate files. False
  // with memcached's error text in `error` (without TLS: "Error TLS not
  // enabled"). May suspend the calling coroutine (files are read off it).
  virtual bool refresh_certs(std::string& error) {
    error = "Error TLS not enabled";
    return false;
  }
};

}  // namespace ithaca::stats
