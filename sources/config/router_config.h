// The router role's configuration: `pools:` (named lists of backend servers
// with their hashing and connection settings) and `route:` (the route tree).
// Plain values, like the rest of config.h; the proxy library maps them onto
// its hash functions and distributions (as instance.cc maps io_backend onto
// machinarium's), and route/route_builder.cc builds the tree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ithaca::config {

// twemproxy's `hash:` names.
enum class hash_function {
  OneAtATime, Md5, Crc16, Crc32, Crc32a, Fnv1_64, Fnv1a_64, Fnv1_32, Fnv1a_32, Hsieh, Murmur, Jenkins,
};
// twemproxy's `distribution:` names plus jump, rendezvous and libmemcached's
// weighted ketama.
enum class distribution { Ketama, Modula, Random, Jump, Rendezvous, LibmemcachedKetama, Ch3, WeightedCh3, McrouterCrc32 };
// What ithaca speaks to a pool's servers. Auto: each new connection asks the
// server (`mn`) and speaks meta if it answers MN, ascii if it answers ERROR.
enum class backend_protocol { Ascii, Meta, Auto };

const char* to_string(hash_function h);
const char* to_string(distribution d);
const char* to_string(backend_protocol p);

// One server of a pool, as written: "host:port", "[v6]:port" or "unix:/path",
// with twemproxy's optional ":weight" and " name" ("10.0.0.1:11211:2 cache-a").
struct backend_server {
  std::string address;  // normalised: "127.0.0.1:11211", "[::1]:11211", "unix:/run/mc.sock"
  uint32_t weight = 1;
  std::string name;     // what ketama hashes; "" = the address (twemproxy)
  int line = 0;         // where it was written (1-based), for errors
};
// Parses one server entry; false and *error ("bad server '...': why").
bool parse_backend_server(std::string_view text, backend_server& out, std::string* error);

struct pool_config {
  std::string name;
  std::vector<backend_server> servers;
  // md5 when `hash:` is omitted: with ketama, libmemcached's and most
  // clients' placement, which spreads short similar keys (k0..k199) evenly;
  // twemproxy's default fnv1a_64 puts all of those on one of two servers.
  // A pool that must place keys as nutcracker did says `hash: fnv1a_64`.
  hash_function hash = hash_function::Md5;
  distribution dist = distribution::Ketama;
  std::string hash_tag;        // twemproxy: two characters, e.g. "{}"; "" = off
  bool hash_stop = false;      // mcrouter: a key with "|#|" hashes only the part before it
  backend_protocol protocol = backend_protocol::Auto;
  uint64_t connect_timeout_ms = 1000;
  uint64_t timeout_ms = 1000;  // one request, from send to reply
  unsigned connections = 1;    // per worker per server
  unsigned max_inflight = 256;  // requests written and unanswered, per connection
  unsigned max_queued = 4096;   // requests waiting behind them; past it SERVER_ERROR at once
  unsigned failure_limit = 3;   // consecutive failures that mark a server down
  uint64_t retry_interval_ms = 500;         // the down server's first probe; doubles, jittered
  uint64_t retry_interval_max_ms = 10000;   // ... up to this
  bool auto_eject_hosts = false;  // twemproxy: a down server leaves the ring instead of failing fast
  bool allow_flush = false;       // flush_all reaches every server of the pool
  int line = 0;
};

enum class route_kind { Local, Pool };
const char* to_string(route_kind k);

// One node of the route tree. Kinds with children (failover, all-sync, ...)
// come with the next routes; the format already has `children`.
struct route_config {
  route_kind kind = route_kind::Local;
  std::string name;  // optional, for logs and stats
  std::string pool;  // kind Pool
  std::vector<route_config> children;
  int line = 0;
};

struct router_config {
  std::vector<pool_config> pools;
  bool has_route = false;  // no `route:`: the local store serves everything
  route_config route;
};

}  // namespace ithaca::config
