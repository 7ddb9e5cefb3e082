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
#include "op_class.h"

namespace ithaca::config {

// One server of a pool, as written: "host:port", "[v6]:port" or "unix:/path",
// with twemproxy's optional ":weight" and " name" ("10.0.0.1:11211:2 cache-a").
struct backend_server {
  std::string address;  // normalised: "127.0.0.1:11211", "[::1]:11211", "unix:/run/mc.sock"
  uint32_t weight = 1;
  std::string name;  // what ketama hashes; "" = the address (twemproxy)
  // weighted_ch3 only: the share of its ch3 keys the server keeps, in [0, 1]
  // (mcrouter's pool `weights`); negative: weight over the largest weight.
  double fraction = -1.0;
  int line = 0;              // where it was written (1-based), for errors
  std::string written;       // the entry as written, for messages
  bool port_written = true;  // false: "host" alone, which takes kDefaultPort (a warning, preflight.h)
  // mcrouter's pool `failure_domains`: the server's (a rack, a switch); 0:
  // none. A failover's deterministic order skips the domains of servers
  // marked down in the same request (failover_policy.h).
  uint32_t failure_domain = 0;
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
  std::string hash_tag;    // twemproxy: two characters, e.g. "{}"; "" = off
  bool hash_stop = false;  // mcrouter: a key with "|#|" hashes only the part before it
  // mcrouter's bucketize (McBucketRoute): the hashed part is first put in one
  // of `buckets` buckets by ch3, and the distribution places that bucket's
  // number (decimal) instead; 0: off.
  uint32_t buckets = 0;
  kinds::backend_protocol protocol = kinds::backend_protocol::Auto;
  uint64_t connect_timeout_ms = 1000;
  uint64_t timeout_ms = 1000;              // one request, from send to reply
  uint64_t late_reply_timeout_ms = 60000;  // a timed-out reply owed first this late closes (backend_conn.h)
  unsigned connections = 1;                // per worker per server
  unsigned max_inflight = 4096;            // requests written and unanswered, per connection
  unsigned max_queued = 65536;             // requests waiting behind them; past it SERVER_ERROR at once
  // mcrouter's --target-max-shadow-requests: shadow copies (routes/shadow_route)
  // outstanding per worker per server; past it a copy is dropped. 0: no bound.
  unsigned max_shadow_requests = 0;
  unsigned failure_limit = 3;              // consecutive failures that mark a server down
  uint64_t retry_interval_ms = 500;        // the down server's first probe; doubles, jittered
  uint64_t retry_interval_max_ms = 10000;  // ... up to this
  bool auto_eject_hosts = false;           // twemproxy: a down server leaves the ring instead of failing fast
  bool allow_flush = false;                // flush_all reaches every server of the pool
  bool preconnect = false;                 // twemproxy: every worker connects to every server at start-up
  bool keep_routing_prefix = false;        // mcrouter: keys reach the servers with their /region/cluster/
  // mcrouter: a server is one destination for every pool that names it with
  // the same settings (mcrouter's destination map), so its health (TKO) and
  // counters are one; ithaca's own pools each keep their own.
  bool shared_servers = false;
  // TLS to the servers: `tls_own` as the pool says it (`tls:`, mcrouter's
  // use_ssl), `tls` the effective settings: router.tls under the pool's own
  // keys (resolve_pool_tls).
  backend_tls tls_own;
  backend_tls tls;
  int line = 0;
};

struct route_config;
// A node's kind name: its module's ("all_sync"), or "ref" for a reference
// to a named route.
const char* kind_name(const route_config& r);

// Operation classes (kinds/op_class.h: one definition, with their names).
using kinds::kOpClasses;
using kinds::op_class;

// The result names `failover_errors` may hold: mcrouter's error results
// (carbon's mc_res_* without the prefix).
const std::vector<std::string>& known_failover_errors();

// One node of the route tree, as any of the three readers (ithaca's YAML, an
// mcrouter JSON file, a nutcracker.yml) writes it: a route of a registered
// kind (route_kind_info.h: its module describes its children and options),
// or a reference to a named route under `routes:` (mcrouter's named
// handles), which the tree builds once and shares. Plain values; the route
// builder (route/route_builder.cc) builds each kind through its module.
//
// Children: every child route is in `children`, each naming its place in its
// parent by `role` (one of the kind's child_slot roles, or a role the
// kind's own reader gives: "prefix", an operation class, "shadow"), so one
// shape serves every kind; "" is one of a list.
struct route_kind_info;
struct route_options;

struct route_config {
  // The node's kind, and the options read for it (route_kind_reader.h);
  // options_of<T>() gives them. nullptr: a reference to the named route `name`.
  const route_kind_info* module = nullptr;
  std::shared_ptr<const route_options> options;
  std::string name;  // optional, for logs and `stats routes`; a reference's named route
  std::string role;  // its place in its parent (above)
  std::vector<route_config> children;
  int line = 0;  // where it was written (1-based), for errors

  bool is_ref() const { return module == nullptr; }
  // Children with role `r`, in order.
  std::vector<const route_config*> with_role(std::string_view r) const;
};

// A reference to the named route `name`, written at `line`.
route_config ref_node(std::string name, int line);

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
  // The largest value a client may send through a tree that does not reach
  // the local store (its servers decide what they take, as behind mcrouter,
  // which has no limit of its own); cache.item_size_max where it does.
  uint64_t max_value_size = 64ull * 1024 * 1024;
  bool spool_fsync = false;
  // `router.tls:`: what a pool's `tls: true` (or mcrouter's use_ssl) means,
  // and the defaults under a pool's own `tls:` keys; mcrouter's
  // --pem-cert-path / --pem-key-path / --pem-ca-path set it too. Its
  // `enabled` is unused.
  backend_tls tls;
  // mcrouter's routing prefixes (route/routes/routing_prefix_route.cc): the
  // prefix of keys that carry none (--route-prefix; "": the routing_prefix
  // route's own, else its first), and whether a prefix no route has goes
  // there rather than failing (--send-invalid-route-to-default).
  std::string default_route;
  // mcrouter's -t: the server_timeout of an mcrouter pool that names none
  // (set from the command line before the config is read).
  uint64_t mcrouter_server_timeout_ms = 1000;
  // mcrouter's --asynclog-disable (set before the config is read): an
  // mcrouter PoolRoute does not spool its failed deletes, whose error
  // reaches the client.
  bool mcrouter_asynclog_disable = false;
  // mcrouter's -a DIR and --use-asynclog-version2: spooled deletes are also
  // written to mcrouter's asynclog there (proxy/asynclog_file.h), under
  // mcrouter's router name (the first -p port).
  std::string mcrouter_asynclog_dir;
  bool mcrouter_asynclog_v2 = false;
  std::string mcrouter_router_name = "0";
  bool send_invalid_route_to_default = false;
  // mcrouter's --config-params (name:value pairs): global params of its
  // preprocessor (mcrouter_jsonm.h), "%name%" in the config.
  std::vector<std::pair<std::string, std::string>> config_params;
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
