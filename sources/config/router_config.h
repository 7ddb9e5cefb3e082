// The router role's configuration: `pools:` (named lists of backend servers
// with their hashing and connection settings) and `route:` (the route tree).
// Plain values, like the rest of config.h; the hash, distribution and
// protocol are the runtime's own enums (sources/kinds/), which the proxy
// library builds pools from, and route/route_builder.cc builds the tree.
#pragma once

#include <cstdint>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backend_protocol.h"
#include "backend_tls.h"
#include "distribution_kind.h"
#include "hash_kind.h"

namespace ithaca::config {

// One server of a pool, as written: "host:port", "[v6]:port" or "unix:/path",
// with twemproxy's optional ":weight" and " name" ("10.0.0.1:11211:2 cache-a").
struct backend_server {
  std::string address;  // normalised: "127.0.0.1:11211", "[::1]:11211", "unix:/run/mc.sock"
  uint32_t weight = 1;
  std::string name;     // what ketama hashes; "" = the address (twemproxy)
  // weighted_ch3 only: the share of its ch3 keys the server keeps, in [0, 1]
  // (mcrouter's pool `weights`); negative: weight over the largest weight.
  double fraction = -1.0;
  int line = 0;         // where it was written (1-based), for errors
  std::string written;  // the entry as written, for messages
  bool port_written = true;  // false: "host" alone, which takes kDefaultPort (a warning, preflight.h)
};
// Parsed by parse_backend_server (server_list.h).

struct pool_config {
  std::string name;
  std::vector<backend_server> servers;
  // md5 when `hash:` is omitted: with ketama, libmemcached's and most
  // clients' placement, which spreads short similar keys (k0..k199) evenly;
  // twemproxy's default fnv1a_64 puts all of those on one of two servers.
  // A pool that must place keys as nutcracker did says `hash: fnv1a_64`.
  kinds::hash_kind hash = kinds::hash_kind::Md5;
  kinds::distribution_kind dist = kinds::distribution_kind::Ketama;
  std::string hash_tag;        // twemproxy: two characters, e.g. "{}"; "" = off
  bool hash_stop = false;      // mcrouter: a key with "|#|" hashes only the part before it
  kinds::backend_protocol protocol = kinds::backend_protocol::Auto;
  uint64_t connect_timeout_ms = 1000;
  uint64_t timeout_ms = 1000;  // one request, from send to reply
  unsigned connections = 1;    // per worker per server
  unsigned max_inflight = 4096;  // requests written and unanswered, per connection
  unsigned max_queued = 65536;  // requests waiting behind them; past it SERVER_ERROR at once
  unsigned failure_limit = 3;   // consecutive failures that mark a server down
  uint64_t retry_interval_ms = 500;         // the down server's first probe; doubles, jittered
  uint64_t retry_interval_max_ms = 10000;   // ... up to this
  bool auto_eject_hosts = false;  // twemproxy: a down server leaves the ring instead of failing fast
  bool allow_flush = false;       // flush_all reaches every server of the pool
  bool preconnect = false;        // twemproxy: every worker connects to every server at start-up
  // TLS to the servers: `tls_own` as the pool says it (`tls:`, mcrouter's
  // use_ssl), `tls` the effective settings: router.tls under the pool's own
  // keys (resolve_pool_tls).
  backend_tls tls_own;
  backend_tls tls;
  int line = 0;
};

// The route kinds not yet described by a module of their own (issue 15;
// README "Routes"); the others are registered (route_kind_info.h) and have
// kind Module. mcrouter's names in comments.
enum class route_kind {
  Local,           // the local store
  Pool,            // a pool's servers by key hash (PoolRoute)
  Ref,             // a named route under `routes:`, by name (mcrouter's named handles)
  Prefix,          // longest matching key prefix picks the child (PrefixSelectorRoute)
  Operation,       // per operation class, with a default (OperationSelectorRoute)
  Failover,        // children in order until a reply that is not an error (FailoverRoute)
  FailoverExptime, // gutter: normal child, failover children whose writes get a TTL cap
                   // (FailoverWithExptimeRoute)
  Shadow,          // the normal child, and a copy of a fraction to shadow routes (ShadowRoute)
  Hash,            // a child by key hash (HashRoute)
  RateLimit,       // token buckets per operation class, over the limit to a fallback
  Module,          // a kind its module describes (route_config::module, route_kind_info.h)
};
const char* to_string(route_kind k);
struct route_config;
// A node's kind name: its module's for kind Module, else to_string(kind).
const char* kind_name(const route_config& r);
// The YAML spelling ("all_sync") back to the kind; false if there is none.
bool route_kind_from_string(std::string_view name, route_kind& out);

// Operation classes, as routes select and limit by them. mcrouter's
// operation names map onto them: get/gets/lease-get/metaget -> Get;
// set/add/replace/append/prepend/cas/lease-set -> Set; delete -> Delete;
// incr/decr -> Arithmetic; touch/gat/gats -> Touch.
enum class op_class : std::uint8_t { Get, Set, Delete, Arithmetic, Touch };
inline constexpr std::size_t kOpClasses = 5;
const char* to_string(op_class c);
bool op_class_from_string(std::string_view name, op_class& out);

// The result names `failover_errors` may hold: mcrouter's error results
// (carbon's mc_res_* without the prefix).
const std::vector<std::string>& known_failover_errors();
// mcrouter's type name for a kind ("FailoverRoute"), for hints in messages.
const char* mcrouter_name(route_kind k);

// One node of the route tree, as any of the three readers (ithaca's YAML, an
// mcrouter JSON file, a nutcracker.yml) writes it. Plain values; the route
// builder (route/route_builder.cc) checks what each kind needs and builds it.
//
// Children: every child route is in `children`, each naming its place in its
// parent by `role` (so one shape serves every kind):
//   ""          one of a list (failover, hash, and the registered list kinds)
//   "default"   prefix/operation: the fallback (mcrouter's wildcard / default_policy)
//   "prefix"    prefix: the child for keys starting with `match`
//   an op class operation: the child for that class ("get", "set", ...)
//   "normal"    failover_exptime, shadow: where requests go
//   "failover"  failover_exptime: the failover children, in order
//   "shadow"    shadow: a shadow route (with key_fraction_* and request_fraction)
//   "fallback"  rate_limit: where requests over the limit go (none: an error)
//   "target"    rate_limit: the route the requests go on to
//   a registered kind's slot role (route_kind_info.h: child_slot::role)
struct route_kind_info;
struct route_options;

struct route_config {
  route_kind kind = route_kind::Local;
  // A kind its module describes (kind Module): its description and the
  // options read for it (route_kind_reader.h); options_of<T>() gives them.
  const route_kind_info* module = nullptr;
  std::shared_ptr<const route_options> options;
  std::string name;   // optional, for logs and `stats routes`; for Ref, the named route
  std::string pool;   // Pool
  std::string role;   // its place in its parent (above)
  std::string match;  // role "prefix": the key prefix ("" matches every key)
  std::vector<route_config> children;

  // FailoverExptime: TTL cap of writes sent to a failover child (the gutter;
  // 10 s from ithaca's YAML, as the paper's gutter pool; 60 s from an mcrouter
  // file, mcrouter's own default; 0: no cap, as in mcrouter).
  uint32_t exptime = 0;
  // Failover, FailoverExptime: which results fail over, by mcrouter's result
  // names (known_failover_errors()). `failover_errors` holds for every class;
  // a non-empty `failover_errors_by_class[c]` replaces it for class c (mcrouter's
  // {"gets": [...], "updates": [...], "deletes": [...]}). All empty: mcrouter's
  // default set (connect_error, connect_timeout, timeout, tko, remote_error,
  // local_error, busy, try_again, shutdown, deadline_exceeded).
  std::vector<std::string> failover_errors;
  std::vector<std::string> failover_errors_by_class[kOpClasses];
  // Failover, FailoverExptime: mcrouter's failover_limit, a token bucket fed
  // `failover_rate` tokens per request (a fraction in (0, 1]: the share of
  // requests that may fail over in the long run) holding at most
  // `failover_burst` (default 1000); a failover takes one token, and without
  // one the error is returned instead. rate 0 = no limit.
  double failover_rate = 0;
  double failover_burst = 0;
  // Shadow (on a role "shadow" child): the keys whose hash falls in
  // [key_fraction_lo, key_fraction_hi) and this fraction of their requests.
  double key_fraction_lo = 0;
  double key_fraction_hi = 1;
  double request_fraction = 1;
  // RateLimit: per class, requests per second (0 = unlimited) and burst.
  double rate[kOpClasses] = {};
  double burst[kOpClasses] = {};
  bool reliable_deletes = false;  // Pool: spool deletes a server could not take (asynclog)
  kinds::hash_kind hash = kinds::hash_kind::Md5;                  // Hash
  kinds::distribution_kind dist = kinds::distribution_kind::Ch3;  // Hash

  int line = 0;  // where it was written (1-based), for errors
  // Children with role `r`, in order.
  std::vector<const route_config*> with_role(std::string_view r) const;
};

// A listener with a tree of its own (a nutcracker.yml's pool, each on its
// own `listen:`); the others serve `route`.
struct listener_route {
  std::string address;  // "host:port" or "unix:/path", as under listen:
  route_config route;
  int line = 0;
  // Restart-only, read by the pooler when it binds (twemproxy's pool keys):
  unsigned backlog = 0;      // listen(2) backlog; 0: listen.backlog
  uint64_t max_clients = 0;  // open clients at most (client_connections); 0: no limit of its own
};

struct router_config {
  // Section `router:` (restart only). Reliable deletes' spool
  // (proxy/delete_spool.h): the directory of its files ("": the default,
  // spool_dir.h: $STATE_DIRECTORY/spool under systemd, else $TMPDIR or /tmp,
  // in "ithaca-spool-PORT" by the first tcp listen port, or
  // "ithaca-spool-pid-PID" without a fixed one), the bytes of unreplayed
  // deletes kept per server (past them a delete is dropped and counted), and
  // whether each record is fdatasync'ed before its delete is answered as
  // spooled (a machine crash; without it, a record survives the process's
  // death, the kernel having it, but not the machine's).
  std::string spool_dir;
  uint64_t spool_max_size = 16ull * 1024 * 1024;
  bool spool_fsync = false;
  // `router.tls:`: what a pool's `tls: true` (or mcrouter's use_ssl) means,
  // and the defaults under a pool's own `tls:` keys; mcrouter's
  // --pem-cert-path / --pem-key-path / --pem-ca-path set it too. Its
  // `enabled` is unused.
  backend_tls tls;
  std::vector<pool_config> pools;
  bool has_route = false;  // no `route:`: the local store serves everything
  route_config route;
  // `routes:`: named routes, each used by name (kind Ref) anywhere in a tree.
  std::vector<route_config> named_routes;  // name = its key under routes:
  std::vector<listener_route> listeners;
  // Where the config came from: "yaml", "mcrouter", "nutcracker" (stats, logs).
  std::string format = "yaml";
};

// Sets each pool's effective `tls` from router.tls and its `tls_own`
// (backend_tls.h). Again whenever router.tls changed (the flags).
void resolve_pool_tls(router_config& rc);

}  // namespace ithaca::config
