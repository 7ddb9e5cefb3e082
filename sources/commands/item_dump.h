// `lru_crawler metadump` / `mgdump` and `stats cachedump`: the server commands
// (admin_command.cc, stats_command.cc) check the request and memcached's
// refusals; the local store's dump is the cache layer's (cache/store_dump.h),
// the router's the pools' (server/pool_inspect.h), reached through this
// interface since flow knows neither.
//
// Thread: the client coroutine that asked; nothing here is shared except the
// crawler switch.
#pragma once

#include <atomic>
#include <bitset>
#include <cstddef>
#include <cstdint>

#include "out_buffer.h"

namespace ithaca::commands {

// memcached's crawler output formats.
enum class dump_format : std::uint8_t {
  Meta,  // "key=<uri> exp=<unix|-1> la=<unix> cas=<n> fetch=yes|no cls=<c> size=<n> flags=<f> \n", then END
  Mg,    // "mg <key>\r\n" ("mg <base64> b\r\n" for a binary key), then EN
};

// The size classes asked for: memcached's ids 1..63 ("all" and "hash" set every one).
inline constexpr unsigned kCrawlerClassLimit = 64;  // memcached's MAX_NUMBER_OF_SLAB_CLASSES
using class_set = std::bitset<kCrawlerClassLimit>;

class item_dump_source {
 public:
  virtual ~item_dump_source() = default;
  // Appends memcached 1.6.45's whole answer to `out` (OK, one line per live
  // item of `classes`, END or EN), handing it to the client as it grows so a
  // large store is never held whole. False if the connection failed.
  virtual bool dump(dump_format format, const class_set& classes, protocol::out_buffer& out) = 0;
  // `stats cachedump CLASS LIMIT` (CLASS checked, 0..63): memcached's answer,
  // "ITEM <key> [<value bytes> b; <expiry, unix seconds, 0 = never> s]" per
  // item of the class, at most `limit` of them (0: no count limit) and at most
  // kCachedumpBytes of lines, then END, appended whole (bounded, so not
  // drained mid-way: `out` may be a holding buffer behind replies in flight).
  // False if the worker stops meanwhile.
  virtual bool cachedump(unsigned cls, unsigned limit, protocol::out_buffer& out) = 0;
};

// memcached's item_cachedump answers in one 2 MB buffer: lines stop short of it.
inline constexpr std::size_t kCachedumpBytes = 2 * 1024 * 1024;

// `lru_crawler enable|disable`: one switch for the process, as memcached has
// one crawler thread. While off, crawl and the dumps answer "CLIENT_ERROR lru
// crawler disabled". [any worker; relaxed: an operator's toggle]
inline std::atomic<bool>& crawler_enabled() {
  static std::atomic<bool> on{true};
  return on;
}

}  // namespace ithaca::commands
