// The command line: ithaca's own options and memcached's common flags, which
// override the config file (defaults < file < flags).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config.h"
#include "extended_options.h"

namespace ithaca::config {

// One -l item: "ADDR" or "ADDR:PORT" ("[v6]:PORT"), after memcached's
// prefixes (notls:, proto[...]:, tag[...]:).
struct cli_listen {
  tcp_address address;
  bool has_port = false;  // an explicit port beats -p, as in memcached
};

// One `-o` sub-option as given ("ssl_key=/k.pem"; has_value false for a
// bare flag such as "ssl_session_cache").
struct cli_suboption {
  std::string name;
  std::string value;
  bool has_value = false;
};

// The exit code of a command line that cannot be used: sysexits.h's
// EX_USAGE, which memcached exits with for most of its own.
inline constexpr int kUsageExit = 64;

struct cli_options {
  std::string config_path;  // --config FILE; "" = built-in defaults only
  bool check_config = false;
  // --preprocessed (with --check-config): print the mcrouter config as
  // mcrouter's preprocessor expands it (mcrouter_jsonm.h) instead of checking.
  bool preprocessed = false;
  // memcached's command line only: argv[0]'s basename is "memcached" (a link)
  // or the first argument is --memcached. ithaca's own options (--config ...)
  // are unknown there, and root without -u is refused as memcached refuses it.
  bool memcached_mode = false;
  bool help = false;
  bool version = false;
  // --metrics-listen HOST[:PORT]: the Prometheus page (overrides metrics.listen).
  std::optional<tcp_address> metrics_listen;
  // --takeover: take the listeners and the store over from the running
  // process (server/takeover_client.h); --takeover-socket PATH overrides
  // takeover.socket.
  bool takeover = false;
  std::optional<std::string> takeover_socket;
  // mcrouter's --pem-cert-path, --pem-key-path, --pem-ca-path: the client
  // certificate, its key and the CA that TLS pools use (router.tls).
  std::optional<std::string> route_prefix;  // mcrouter's --route-prefix (-R there)
  bool send_invalid_route_to_default = false;
  std::vector<std::pair<std::string, std::string>> config_params;  // mcrouter's --config-params
  std::optional<std::string> pem_cert_path;
  std::optional<std::string> pem_key_path;
  std::optional<std::string> pem_ca_path;
  // mcrouter's --big-value-split-threshold (0: off), --big-value-batch-size,
  // --big-value-hide-reply-flag: a big_value route above every routed tree.
  std::optional<uint64_t> big_value_split_threshold;
  std::optional<uint64_t> big_value_batch_size;
  bool big_value_hide_reply_flag = false;
  // mcrouter's --enable-logging-route: a logging route above every routed
  // tree (above the big_value one, as mcrouter's ProxyRoute wraps its root).
  bool enable_logging_route = false;
  // mcrouter's --disable-reload-configs: no reload when the config file
  // changes (server.reload_on_change false, whatever the file says).
  bool disable_reload_configs = false;

  // mcrouter's command line (mcrouter_cli.h): argv[0]'s basename is
  // "mcrouter" or the first argument is --mcrouter.
  bool mcrouter_mode = false;
  std::string config_text;                         // --config JSON / --config-str: the config itself
  std::vector<uint16_t> mcrouter_ports;            // -p, --port (repeatable): a listener each
  std::vector<std::string> listen_hosts;           // --listen-addresses (each port on each)
  std::vector<int> listen_fds;                     // --listen-sock-fd: listening sockets inherited
  std::optional<std::string> log_file;             // -L, --log-path
  std::optional<uint64_t> server_timeout_ms;       // -t: pools without their own server_timeout
  std::optional<unsigned> timeouts_until_tko;      // failures that mark a server down
  std::optional<uint64_t> probe_delay_initial_ms;  // -r: a down server's first probe
  std::optional<unsigned> target_max_shadow_requests;  // every pool's max_shadow_requests
  std::string runtime_vars_file;  // --runtime-vars-file: route/runtime_vars.h ("": none)
  std::string pool_stats_file;    // --pool-stats-config-file: config/pool_stats_file.h ("": none)
  bool enable_flush_cmd = false;                   // flush_all reaches the servers (else refused)
  bool allow_only_gets = false;                    // updates answer as a NullRoute would
  // --config-dump-root ("": off) and --max-dumped-config-age (seconds, 0:
  // never read a dumped copy): config_dump.h.
  std::string config_dump_root;
  uint64_t max_dumped_config_age_s = 12 * 3600;
  // --stats-root ("": off) and --stats-logging-interval (ms, 0: off):
  // mcrouter's stats files (server/stats_files.h).
  std::string stats_root;
  // -a, --async-dir: mcrouter's asynclog directory; --use-asynclog-version2;
  // --asynclog-disable (no spooling of failed deletes at all).
  std::string async_dir;
  bool asynclog_v2 = false;
  bool asynclog_disable = false;
  uint64_t stats_logging_interval_ms = 10000;

  // memcached's flags; empty = not given.
  std::optional<uint16_t> port;                    // -p, --port
  std::optional<std::vector<cli_listen>> listen;   // -l, --listen (comma-separated, repeatable)
  std::vector<std::string> listen_args;            // the -l arguments as given, each once (stats settings' inter)
  std::vector<std::string> listen_warnings;        // notes on -l items memcached would ignore (proto[meta])
  std::optional<std::string> unix_socket;          // -s, --unix-socket
  std::optional<unsigned> unix_mode;               // -a, --unix-mask (octal permission bits)
  std::optional<uint16_t> udp_port;                // -U, --udp-port
  std::optional<uint64_t> memory_limit;            // -m, --memory-limit (bytes)
  std::optional<unsigned> threads;                 // -t, --threads
  std::optional<unsigned> max_connections;         // -c, --conn-limit
  std::optional<uint64_t> item_size_max;           // -I, --max-item-size (bytes)
  std::optional<double> slab_growth_factor;        // -f, --slab-growth-factor
  std::optional<unsigned> slab_min_size;           // -n, --slab-min-size
  std::optional<unsigned> backlog;                 // -b, --listen-backlog
  unsigned verbose = 0;                            // -v count: 1 info, 2 debug, 3 trace
  bool enable_shutdown = false;                    // -A, --enable-shutdown
  bool disable_watch = false;                      // -W, --disable-watch
  bool disable_dumping = false;                    // -X, --disable-dumping
  bool disable_evictions = false;                  // -M, --disable-evictions
  bool disable_cas = false;                        // -C, --disable-cas
  bool disable_flush_all = false;                  // -F, --disable-flush-all
  std::optional<char> prefix_delimiter;            // -D <char> (also turns stats detail on)
  std::optional<unsigned> reqs_per_event;          // -R, --max-reqs-per-event
  std::optional<kinds::binding_protocol> binding;  // -B, --protocol
  bool enable_ssl = false;                         // -Z, --enable-ssl
  std::vector<cli_suboption> tls_options;          // -o ssl_*=..., in order (tls_config.h)
  extended_settings extended;                      // the other -o options (extended_options.h)
  // What was given that ithaca takes without doing what memcached does with
  // it (-N, most -o options): one line each, for the start's log.
  std::vector<std::string> notes;
  bool license = false;  // -i, --license
  // memcached's process flags (server/process_setup.h); all but -d also `process:` keys.
  bool daemonize = false;                // -d, --daemon
  std::optional<std::string> user;       // -u, --user
  std::optional<std::string> pid_file;   // -P, --pidfile
  bool core_dumps = false;               // -r, --enable-coredumps
  bool lock_memory = false;              // -k, --lock-memory
  bool large_pages = false;              // -L, --enable-largepages
  std::optional<std::string> auth_file;  // -Y, --auth-file
  std::optional<std::string> memory_file;  // -e, --memory-file
  bool sasl = false;                     // -S, --enable-sasl
  // Not a flag: memcached's MEMCACHED_SASL_PWDB environment variable, which
  // main() copies here (it names server.sasl_pwdb's file, over the config's).
  std::optional<std::string> sasl_pwdb;
};

// Parses argv[1..argc-1] into `out`. False with *error ("-t: expected an
// integer from 1 to 256, got 'x'") on an unknown, refused or malformed option;
// the caller prints it on one line and exits with kUsageExit.
// memcached mode (cli_options::memcached_mode) when argv[0]'s basename is
// "memcached" or argv[1] is "--memcached": only memcached's options (those
// with a short name) are known. Does not touch the file system. [any thread]
bool parse_args(int argc, const char* const* argv, cli_options& out, std::string* error);

// Applies the flags given in `cli` on top of `c`. Rules (memcached's):
//  -l replaces the tcp listeners; an item without a port gets -p, else the
//     port of the config's first tcp listener, else 11211;
//  -p without -l sets the port of every tcp listener;
//  -s replaces every listener with that one unix socket (no tcp, no udp);
//  -a sets the mode of every unix socket (listen.unix_mode);
//  -I also lowers large_value_threshold to item_size_max if it was above;
//  -o ssl_* set the tls settings they name over the file's; -Z turns TLS on;
//  -u, -P, -r, -k, -L set process.user, pid_file, core_dumps, lock_memory,
//     large_pages.
//  -D sets server.prefix_delimiter and turns server.detail_enabled on.
// Does not validate; see make_config().
void apply_overrides(const cli_options& cli, config& c);

// defaults < --config file < flags, then validate(). False with *error.
// allow_empty_file false (SIGHUP): an empty file is an error (see load_config).
// `dumped`: the text of the config file's dumped copy, read in its place
// (mcrouter's fallback at start, config_dump.h).
bool make_config(const cli_options& cli, config& out, std::string* error, bool allow_empty_file = true,
                 const std::string* dumped = nullptr);

// --check-config: returns the exit code (0 valid, 1 not) and sets *message
// to "configuration OK" or to the error. Beyond make_config, what the start
// would trip on (preflight.h: TLS files, the spool directory, looked at with
// nothing made); *warnings gets what is worth saying (a server without a
// port, a port in use now), valid or not.
int check_config(const cli_options& cli, std::string* message, std::vector<std::string>* warnings = nullptr);

// --help text, --version line ("ithaca 0.1.0"), --license text.
std::string usage();
std::string version_string();
std::string license_text();

}  // namespace ithaca::config
