// ithaca's configuration: one plain value type, built from defaults, then the
// YAML file (load.h), then command-line flags (cli.h), then validated.
//
// A config is immutable once the server has started: threads share it as a
// read-only snapshot, and a reload builds a new one (and keeps the old one if
// the new file has an error). Each YAML section has its own struct here and its
// own parse function in load.cc, so a new section (routes, pools, replication)
// is one struct, one function, and one line in the section table.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backend_tls.h"
#include "binding_protocol.h"
#include "cidr.h"
#include "log_config.h"
#include "router_config.h"
#include "tls_config.h"
#include "units.h"

namespace ithaca::config {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * kKiB;
inline constexpr uint64_t kGiB = 1024 * kMiB;

// memcached's default TCP port.
inline constexpr uint16_t kDefaultPort = 11211;
// memcached's default -a: only the server's user may connect.
inline constexpr unsigned kDefaultUnixMode = 0700;

// A TCP listener. `host` is an IPv4/IPv6 literal or a name; IPv6 is stored
// without brackets; "*" is every interface, IPv4 and IPv6 (memcached's "-l *",
// and what it binds without -l). Port 0 asks the kernel for a free port.
struct tcp_address {
  std::string host;
  uint16_t port = kDefaultPort;
  // With TLS on (tls.enabled, -Z): this listener stays plaintext, memcached's
  // "-l notls:HOST:PORT" (spelled the same in listen.tcp).
  bool notls = false;
  // "-l btls:HOST:PORT" / "-l mtls:HOST:PORT": TLS with no client
  // certificate asked / one required (tls_config.h: peer_check).
  peer_check peer = peer_check::Default;
  // "-l proto[ascii]:HOST:PORT" (memcached 1.6's prefix, after any tls one):
  // a listener that speaks one protocol from a connection's first byte;
  // Negotiating (memcached's "negotiating", the default) tells them apart by
  // that byte.
  kinds::binding_protocol protocol = kinds::binding_protocol::Negotiating;
  // "-l tag[NAME]:HOST:PORT": memcached's listener tag (1 to 8 characters),
  // which only its proxy reads; accepted and kept, it routes nothing here.
  std::string tag;
  bool operator==(const tcp_address&) const = default;
};
// "host", "host:port", "[v6]", "[v6]:port". A missing port is `default_port`.
bool parse_tcp_address(std::string_view text, uint16_t default_port, tcp_address& out, std::string* error);
// "127.0.0.1:11211", "[::1]:11211".
std::string to_string(const tcp_address& a);
// How many bytes of `text` are a listener prefix ("notls:", "btls:",
// "mtls:", then "proto[...]:" and "tag[...]:", memcached 1.6's order); 0
// without one.
size_t listen_prefix_length(std::string_view text);
// parse_tcp_address after memcached's prefixes: "notls:", "btls:" or "mtls:"
// (sets `notls` or `peer`), then "proto[ascii|binary|negotiating]:" (sets
// `protocol`), then "tag[NAME]:" (sets `tag`). memcached's words for a bad
// one ("Invalid protocol spec", "Listener tags must be between 1 and 8
// characters"). *warning (may be null) gets a note for a protocol name
// memcached ignores (it keeps negotiating): "proto[meta]".
bool parse_listen_address(std::string_view text, uint16_t default_port, tcp_address& out, std::string* error,
                          std::string* warning = nullptr);

// Section `listen`.
struct listen_config {
  // Like memcached without -l: every interface, IPv4 and IPv6 ("*": 0.0.0.0
  // and [::] with IPV6_V6ONLY, both on the port; a host without IPv6 starts
  // with IPv4 and logs it). The sample file narrows this to 127.0.0.1; see
  // config/ithaca.yaml.
  std::vector<tcp_address> tcp{tcp_address{"*", kDefaultPort}};
  // memcached's -l arguments as given (comma-joined, a repeated one once), for
  // `stats settings` inter; "" when the listeners come from the file or the
  // defaults.
  std::string inter;
  std::vector<std::string> unix_paths;  // unix-domain stream sockets
  // Listening sockets this process was started with (mcrouter's
  // --listen-sock-fd): served as they are, beside the others. Command line
  // only; a reload keeps them (restart-only).
  std::vector<int> inherited_fds;
  // Permission bits of each unix socket, whatever the umask (memcached -a,
  // "access mask for UNIX socket, in octal (default: 700)").
  unsigned unix_mode = kDefaultUnixMode;
  uint16_t udp_port = 0;    // on every tcp host; 0 = off (memcached >= 1.5.6)
  unsigned backlog = 1024;  // listen(2) backlog, memcached -b
};

enum class io_backend { Auto, IoUring, Epoll };
const char* to_string(io_backend b);

// Section `server`: threads and connections.
struct server_config {
  unsigned workers = 4;  // worker machines, memcached -t
  io_backend backend = io_backend::Auto;
  unsigned max_connections = 1024;  // memcached -c
  uint64_t idle_timeout_ms = 0;     // close idle clients after this; 0 = never
  bool enable_shutdown = false;     // accept the ascii "shutdown" command, memcached -A
  bool enable_watch = true;         // accept `watch` (live event streams); memcached -W turns it off
  bool enable_dumping = true;       // accept lru_crawler metadump / mgdump, stats cachedump and
                                    // stats detail; memcached -X turns it off
  bool enable_flush_all = true;     // accept flush_all (ascii, binary); memcached -F turns it off
  // `stats detail`: the character ending a key's prefix (memcached -D) and
  // whether the per-prefix counts are on at start (-D turns them on, as in
  // memcached; `stats detail on|off` switches them at run time).
  char prefix_delimiter = ':';
  bool detail_enabled = false;
  // memcached -R: requests a connection runs from one read before it lets
  // the worker's other connections go first (its replies are sent then).
  unsigned reqs_per_event = 20;
  // memcached -B: the protocols a client connection may speak (kinds/).
  // Negotiating decides per connection by its first byte (0x80: binary);
  // Ascii takes every byte as text (classic and meta commands); Binary takes
  // only binary packets.
  kinds::binding_protocol binding = kinds::binding_protocol::Negotiating;
  uint64_t stack_size = 64 * kKiB;        // usable bytes per coroutine stack
  uint64_t read_buffer_size = 16 * kKiB;  // initial per-client read buffer
  // memcached -Y: ascii authentication. A connection must first send `set <any key> 0 0 N`
  // whose value is "user password", matched against this file's `user:password` lines
  // (auth_files.h); before that every command answers "CLIENT_ERROR unauthenticated".
  // "" = off. The file is read at start and again on each SIGHUP (as memcached does).
  std::string auth_file;
  // memcached -S: SASL PLAIN on the binary protocol, which is then the only one; a
  // binary command other than SASL's and version before authentication gets "Auth failure."
  bool sasl = false;
  // The `user:password` file SASL PLAIN checks (memcached --enable-sasl-pwdb's
  // MEMCACHED_SASL_PWDB, which overrides it). Read at start and on each SIGHUP.
  std::string sasl_pwdb;
  // Reload when the config file (or a file it imports, or an auth or TLS
  // file a SIGHUP re-reads) changes, as a SIGHUP would (server/config_watch.h).
  // Off by default for ithaca's YAML and a nutcracker.yml (a file edited in
  // several saves, or by a tool that then runs `systemctl reload`, should
  // not be applied half-done); an mcrouter config turns it on, as mcrouter
  // watches its config (its --disable-reload-configs turns it off here too).
  // Live: a reload that flips it starts or stops the watching.
  bool reload_on_change = false;
};

// cache.eviction: which items go when memory is full (store_types.h: eviction_policy).
enum class cache_eviction { S3fifo, Clock };

// Section `cache`: the local store.
struct cache_config {
  uint64_t memory_limit = 64 * kMiB;            // memcached -m
  uint64_t item_size_max = kMiB;                // memcached -I
  uint64_t large_value_threshold = 256 * kKiB;  // larger values go to an unlinked temp file
  std::string large_value_dir = default_large_value_dir();
  // Disk budget of the large values (one temp file); full: the coldest are evicted.
  uint64_t large_value_disk_limit = kGiB;
  // memcached -e: the item region is this file, mapped shared (tmpfs or DAX), kept across
  // a SIGUSR1 stop; "" = anonymous memory (store/memory_file.h). Restart-only.
  std::string memory_file;
  unsigned hash_power = 16;            // buckets = 2^hash_power at start-up (memcached's default); grows
  uint64_t gc_interval_ms = 1000;      // period of the cron GC sweep
  uint64_t lease_interval_ms = 10000;  // at most one lease token per hot key per interval
  // memcached's size classes, which `stats slabs` / `stats items` report items by (ithaca
  // allocates with malloc; the classes are only how it counts): -f and -n.
  double slab_growth_factor = 1.25;
  unsigned slab_min_size = 48;
  // memcached's LRU crawler switch (-o no_lru_crawler): off, `lru_crawler
  // crawl|metadump|mgdump` answer "CLIENT_ERROR lru crawler disabled" until
  // `lru_crawler enable`. Expired items are reclaimed by the GC sweep either way.
  bool lru_crawler = true;
  // The hash table doubles past 1.5 items per bucket; false keeps its start
  // size (memcached's -o no_hashexpand).
  bool hash_expand = true;
  // memcached -M: false answers a store that does not fit "SERVER_ERROR out of
  // memory storing object" instead of evicting (expired items are still reclaimed).
  bool evictions = true;
  // memcached -C: false hands out CAS 0 and compares client CAS values as
  // memcached -C does (store.h: cas_enabled).
  bool cas_enabled = true;
  // s3fifo (scan-resistant: a small FIFO admits new items, a ghost set remembers the
  // ones it evicted) or clock (one CLOCK over every item, as before). Restart only.
  cache_eviction eviction = cache_eviction::S3fifo;

  // $TMPDIR if set and absolute, else /tmp.
  static std::string default_large_value_dir();
};

// memcached's slab_chunk_max: half its 1 MiB page. memcached refuses an -I below it;
// ithaca takes the smaller of the two. Fixed at start-up with the class table.
inline uint64_t slab_chunk_max(const cache_config& c) {
  return c.item_size_max < 512 * kKiB ? c.item_size_max : 512 * kKiB;
}

// Section `replication`: a master streams every change to its slaves, yrmcds's
// protocol (sources/replication/). Every setting needs a restart.
// Auto: the node holding `virtual_ip` on a local interface is the master, the
// others are slaves of virtual_ip:port; the role follows the address at run
// time (server/role_monitor.h). It is the default when virtual_ip is set.
enum class replication_role { None, Master, Slave, Auto };
const char* to_string(replication_role r);
// `ack`: none (yrmcds: a write is answered once applied on the master), or
// slave (answered once a slave confirmed it; ithaca slaves only).
enum class replication_ack { None, Slave };
const char* to_string(replication_ack a);
inline constexpr uint16_t kDefaultReplicationPort = 11213;  // yrmcds repl_port
struct replication_config {
  replication_role role = replication_role::None;
  // master: where slaves connect (port below); "" = follow the clients'
  // listeners (replication_listen_host below).
  std::string listen_host;
  // master: the peers that may be slaves; another is closed before anything
  // is sent (counted in repl_peers_refused). Empty = any peer that reaches
  // listen_host:port (yrmcds's behaviour).
  std::vector<cidr> allow;
  uint16_t port = kDefaultReplicationPort;
  std::string master;                           // slave: the master's host (connects to master:port)
  uint64_t slave_timeout_ms = 10000;            // master: drop a slave silent this long (yrmcds)
  uint64_t heartbeat_interval_ms = 1000;        // slave: one heartbeat byte this often
  uint64_t master_timeout_ms = 10000;           // slave: a master host that acknowledges nothing this long is lost
  uint64_t send_buffer = 32 * kMiB;             // master: a slave further behind is dropped (resyncs)
  replication_ack ack = replication_ack::None;  // master: when a write is answered (live)
  uint64_t ack_timeout_ms = 1000;               // master, ack: slave: the error after this long (live)
  uint64_t queue_size = 64 * kMiB;              // master: the workers' hand-off ring
  bool serve_reads = false;                     // slave: answer reads (yrmcds closes clients)
  // Roles by virtual IP (role: auto).
  std::string virtual_ip;             // an IPv4/IPv6 literal; its holder is the master
  uint64_t check_interval_ms = 1000;  // how often the kernel is asked who holds it (yrmcds: 1 s)
  uint64_t failover_delay_ms = 5000;  // a slave that lost its master waits this long for it (yrmcds: 5 s)
  // `replication.tls:` mutual TLS between ithaca nodes (restart only): the
  // master's slave listener takes only TLS with a client certificate that
  // chains to ca_cert; a slave connects with its chain_cert and checks the
  // master's against ca_cert (and server_name, if given). Per node: a node
  // with it on neither serves nor follows a plaintext (yrmcds) peer.
  backend_tls tls;
};

// Section `process`: memcached's process-level flags (restart only; -d, to
// daemonize, is a flag only: under systemd ithaca runs in the foreground).
// Applied in memcached's order (server/process_setup.h).
struct process_config {
  std::string pid_file;      // -P: written once listening, removed at a clean exit
  std::string user;          // -u: switched to once listening, when started as root
  bool core_dumps = false;   // -r: RLIMIT_CORE raised to its maximum
  bool lock_memory = false;  // -k: mlockall(MCL_CURRENT | MCL_FUTURE)
  bool large_pages = false;  // -L: transparent huge pages for the store's memory
  bool operator==(const process_config&) const = default;
};

// Section `takeover`: handing the listeners and the store to a new process
// (`ithaca --takeover`, SIGUSR2; server/takeover_server.h). The socket the
// running process listens on for it: `socket` when set ("" spelled out:
// none), else <$RUNTIME_DIRECTORY or /run/ithaca>/ithaca-<first tcp port>.takeover
// when that directory exists and the port is not 0 (server/takeover_path.h).
struct takeover_config {
  bool socket_set = false;
  std::string socket;
  uint64_t timeout_ms = 30000;  // the whole handover, each side
  bool operator==(const takeover_config&) const = default;
};

// Section `logging` (defined by the log library, which is built first).
// Section `metrics`: the Prometheus page (GET /metrics) on a small HTTP
// listener of its own; off unless `listen` is set (or --metrics-listen).
inline constexpr uint16_t kDefaultMetricsPort = 9150;  // memcached_exporter's port
struct metrics_config {
  bool enabled = false;
  tcp_address listen{"127.0.0.1", kDefaultMetricsPort};
  bool operator==(const metrics_config&) const = default;
};

using log::log_level;
using log::logging_config;
const char* to_string(log_level l);
bool parse_log_level(std::string_view text, log_level& out);

// The file a configuration was read from, for introspection
// (`__mcrouter__.config_md5_digest`, `preprocessed_config`; route/introspect.h).
struct config_source {
  std::string text;       // the file as read (load_config_text sets it)
  bool mcrouter = false;  // read as an mcrouter JSON config
  // mcrouter's preprocessed config: the JSON its preprocessor makes of the
  // file (JSONM macros and variables expanded, `#include`s in place),
  // serialized. The mcrouter reader fills it when it expands a file; while
  // it is "", `preprocessed_config` answers the file's text as it is.
  std::string preprocessed;
};

struct config {
  listen_config listen;
  server_config server;
  cache_config cache;
  logging_config logging;
  router_config router;  // `pools:` and `route:`
  replication_config replication;
  metrics_config metrics;
  tls_config tls;            // `tls:`, memcached's -Z and -o ssl_*
  process_config process;    // `process:`, memcached's -u -P -r -k -L
  takeover_config takeover;  // `takeover:`
  // Not a setting: the files this config was read from, the --config file
  // first, then every file it imported (load_context::add_source), each
  // once. What the config watcher watches (server/config_watch.h).
  std::vector<std::string> sources;
  // Not a setting: CLOCK_REALTIME (ns) when make_config began reading the
  // files, so the watcher, which takes its first identities a moment later,
  // can tell a file modified since (config_watch::set).
  int64_t read_at_ns = 0;
  config_source source;  // what the file said, for introspection
};

// The host the master accepts slaves on: replication.listen if set; else
// the virtual IP with role: auto (slaves connect to nothing else); else the
// clients' listen address: a wildcard if any listen.tcp host is one
// (0.0.0.0, ::), otherwise the first listen.tcp host; 127.0.0.1 with no tcp
// listener (clients on unix sockets only are local). So a master whose clients
// listen on 127.0.0.1 does not offer its whole store on every interface.
std::string replication_listen_host(const config& c);

// Allowed ranges, shared by the YAML loader, the flags and validate().
inline constexpr range kPortRange{0, 65535};
inline constexpr range kBacklogRange{1, 65535};
inline constexpr range kWorkersRange{1, 256};
inline constexpr range kMaxConnectionsRange{1, 1u << 20};
inline constexpr range kIdleTimeoutRange{0, 365ull * 24 * 3600 * 1000};
inline constexpr range kStackSizeRange{16 * kKiB, 8 * kMiB};
inline constexpr range kReadBufferRange{kKiB, 64 * kMiB};
inline constexpr range kMemoryLimitRange{kMiB, 4096 * kGiB};
inline constexpr range kItemSizeMaxRange{kKiB, kGiB};  // memcached -I: 1k .. 1024m
inline constexpr range kLargeValueThresholdRange{kKiB, kGiB};
inline constexpr range kLargeValueDiskLimitRange{kMiB, uint64_t{1} << 50};
inline constexpr range kHashPowerRange{4, 32};
inline constexpr range kSlabMinSizeRange{1, 512 * kKiB};  // memcached -n
inline constexpr range kReqsPerEventRange{1, 1u << 30};   // memcached -R (> 0)
inline constexpr double kSlabGrowthFactorMax = 100;       // memcached -f (> 1)
inline constexpr range kGcIntervalRange{1, 3600 * 1000};
inline constexpr range kLeaseIntervalRange{1, 3600 * 1000};
inline constexpr range kAsyncQueueRange{16, 1u << 20};
inline constexpr range kSpoolMaxSizeRange{64, uint64_t{1} << 40};
inline constexpr range kMaxValueSizeRange{1024, uint64_t{1} << 30};  // router.max_value_size: 1 KiB to 1 GiB
inline constexpr range kSlaveTimeoutRange{100, 3600 * 1000};
inline constexpr range kMasterTimeoutRange = kSlaveTimeoutRange;
inline constexpr range kHeartbeatIntervalRange{10, 60 * 1000};
inline constexpr range kSendBufferRange{64 * kKiB, 64 * kGiB};
// Below the request loop's 10-minute limit for a request in flight.
inline constexpr range kAckTimeoutRange{1, 300 * 1000};
inline constexpr range kReplicationQueueRange{kMiB, 64 * kGiB};
inline constexpr range kCheckIntervalRange{10, 60 * 1000};
inline constexpr range kFailoverDelayRange{0, 3600 * 1000};
// sizeof(sockaddr_un::sun_path) - 1
inline constexpr size_t kMaxUnixPath = 107;

// A rule that failed. `keys` ("section.key") are the settings involved, most
// likely culprit first, so the loader can point at a line that set one.
struct validation_error {
  std::vector<std::string> keys;
  std::string message;
};

// Checks the rules that involve more than one field (and the file system, for
// large_value_dir). Returns false and fills *error on the first failure.
// Per-field ranges are checked where values enter (loader, flags).
bool validate(const config& c, validation_error* error);

// memcached's refusals of -S / -Y beside UDP, in its words, and ithaca's of
// -S with -Y (memcached starts with both, -Y's ascii binding winning, and
// SASL then never reachable); "" when the combination is fine. [pure]
std::string auth_flag_conflict(bool sasl, bool ascii_auth, uint16_t udp_port);
// memcached's refusals of a -B beside -S (anything but binary) or -Y
// (anything but ascii).
extern const char* const kSaslBindingConflict;
extern const char* const kAsciiAuthBindingConflict;

}  // namespace ithaca::config
