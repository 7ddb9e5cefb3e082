#pragma once
// One request, whatever protocol it came in. The parsers fill it; the executor
// maps it onto the store or a route. Every string_view points into the
// connection's input buffer (or into `scratch` for a base64-decoded meta key),
// so a request is valid only until the parser's result bytes are consumed.
// Reusing one request object per connection keeps the hot path allocation-free.

#include <array>
#include <cstdint>
#include <string_view>

#include "key_list.h"
#include "meta_flags.h"

namespace ithaca::protocol {

enum class protocol_kind : std::uint8_t { Ascii, Meta, Binary };

enum class command : std::uint8_t {
  Unknown,
  // classic text (and their binary equivalents)
  Get,
  Gets,
  Gat,
  Gats,
  Set,
  Add,
  Replace,
  Append,
  Prepend,
  Cas,
  Incr,
  Decr,
  Delete,
  Touch,
  FlushAll,
  Version,
  Verbosity,
  Stats,
  Quit,
  Shutdown,
  CacheMemlimit,
  RefreshCerts,  // memcached's refresh_certs (TLS)
  // memcached's operator commands for features ithaca does not have (args:
  // the rest of the line); answered as memcached does with them off
  Watch,
  Slabs,
  Lru,
  LruCrawler,
  // mcrouter ascii leases
  LeaseGet,
  LeaseSet,
  McMetaget,  // mcrouter's `metaget <key>`: the item's exptime (META line)
  // meta text
  MetaGet,
  MetaSet,
  MetaDelete,
  MetaArithmetic,
  MetaNoop,
  MetaDebug,
  // binary only
  Noop,
  Stat,
  SaslListMechs,
  SaslAuth,
  SaslStep,
};

// Longest key memcached accepts (KEY_MAX_LENGTH).
inline constexpr std::size_t kMaxKeyLength = 250;

struct request {
  command cmd = command::Unknown;
  protocol_kind proto = protocol_kind::Ascii;

  key_list keys;                  // one key, or several for get/gets/gat/gats
  std::string_view value;         // set-like commands: the data, without "\r\n"
  std::uint32_t flags = 0;        // client flags (set-like)
  std::int64_t exptime = 0;       // set-like, touch, gat; as sent (relative or absolute)
  std::uint64_t cas = 0;          // cas compare value (ascii cas, binary header cas)
  std::uint64_t delta = 0;        // incr/decr
  std::uint64_t initial = 0;      // binary incr/decr initial value
  std::uint64_t lease_token = 0;  // lease-set
  std::int64_t flush_delay = 0;   // flush_all [delay]
  bool has_flush_delay = false;
  std::uint32_t verbosity = 0;    // verbosity N
  std::uint32_t memlimit_mb = 0;  // cache_memlimit N (megabytes, as memcached reads it)
  std::string_view args;          // stats / shutdown arguments, rest of the line
  // mcrouter's routing prefix ("/region/cluster/") the router's
  // routing_prefix route took off every key before routing them (the keys
  // hash and go to servers without it). Each key keeps it just before its
  // first byte in memory, so a pool with keep_routing_prefix sends the whole
  // key by widening the view (routing_prefix_route.cc). Empty: none.
  std::string_view routing_prefix;

  // Suppress the reply: ascii "noreply", binary quiet opcodes, meta 'q'.
  // Meta 'q' only hides nominal replies (HD, NF for md, EN for mg), so the
  // executor looks at meta.has('q') rather than at this bit for meta.
  bool noreply = false;

  // Binary protocol header fields, echoed in the response.
  std::uint8_t opcode = 0;
  std::uint32_t opaque = 0;
  bool binary_with_key = false;  // GetK/GetKQ/GATK/GATKQ: echo the key

  meta_flags meta;
  bool meta_key_binary = false;  // 'b': keys[0] was base64 and is decoded in scratch

  // Decoded base64 meta key (a 250-byte base64 token decodes to <= 187 bytes).
  std::array<char, kMaxKeyLength> scratch{};

  request() = default;
  // Copies re-point a base64-decoded key at their own scratch.
  request(const request& other) { *this = other; }
  request& operator=(const request& other);

  std::string_view key() const { return keys.empty() ? std::string_view{} : keys.front(); }

  // Resets every field so the object can be reused for the next request.
  void clear();
};

}  // namespace ithaca::protocol
