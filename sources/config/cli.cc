#include "cli.h"

#include "preflight.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <ctime>
#include <string_view>

#include "config_file.h"
#include "fail.h"
#include "jsonm_value.h"
#include "load.h"
#include "mcrouter_cli.h"
#include "mcrouter_jsonm.h"
#include "mcrouter_reader.h"
#include "preflight.h"
#include "route_kind_info.h"

#ifndef ITHACA_VERSION
#define ITHACA_VERSION "unknown"
#endif

namespace ithaca::config {

namespace {

// A handler gets the value (empty for flags) and the option's name as the
// user spelled it ("-t" or "--threads"), for messages.
using cli_handler = bool (*)(cli_options& o, std::string_view value, const std::string& name, std::string* error);

struct cli_option {
  char short_name;        // 0 = long only
  const char* long_name;  // nullptr = short only
  bool takes_value;
  cli_handler handle;
  const char* refusal;  // non-null: a memcached option we refuse, and why
};

bool bad_value(const std::string& name, value_kind kind, range r, std::string_view value, std::string* error) {
  return fail(error, name + ": expected " + describe(kind, r) + ", got '" + std::string(value) + "'");
}

template <class T>
bool integer(std::optional<T>& out, range r, std::string_view value, const std::string& name, std::string* error) {
  uint64_t v = 0;
  if (!parse_unsigned(value, v) || !r.contains(v)) {
    return bad_value(name, value_kind::Integer, r, value, error);
  }
  out = static_cast<T>(v);
  return true;
}

bool on_port(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  return integer(o.port, kPortRange, v, n, e);
}
bool on_udp_port(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  return integer(o.udp_port, kPortRange, v, n, e);
}
bool on_threads(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  return integer(o.threads, kWorkersRange, v, n, e);
}
bool on_conn_limit(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  return integer(o.max_connections, kMaxConnectionsRange, v, n, e);
}
bool on_backlog(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  return integer(o.backlog, kBacklogRange, v, n, e);
}

// memcached's -m is in megabytes; a suffix (512k, 2g) is accepted too.
bool on_memory_limit(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  uint64_t bytes = 0;
  uint64_t megabytes = 0;
  bool ok = parse_unsigned(v, megabytes) ? megabytes <= kMemoryLimitRange.max / kMiB : parse_size(v, bytes);
  if (ok && bytes == 0) bytes = megabytes * kMiB;
  if (!ok || !kMemoryLimitRange.contains(bytes)) {
    return fail(e, n + ": expected megabytes (or a size such as 512m, 2g) from 1 to " +
                       std::to_string(kMemoryLimitRange.max / kMiB) + ", got '" + std::string(v) + "'");
  }
  o.memory_limit = bytes;
  return true;
}

// memcached's -I: bytes, or with a k/m suffix.
bool on_item_size(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  uint64_t bytes = 0;
  if (!parse_size(v, bytes) || !kItemSizeMaxRange.contains(bytes)) {
    return bad_value(n, value_kind::Size, kItemSizeMaxRange, v, e);
  }
  o.item_size_max = bytes;
  return true;
}

// memcached's -f: a factor above 1 (its words when not).
bool on_growth_factor(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  const std::string text(v);
  char* end = nullptr;
  const double f = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(f > 1.0) || f > kSlabGrowthFactorMax) {
    return fail(e, n + ": Factor must be greater than 1 (and at most 100), got '" + text + "'");
  }
  o.slab_growth_factor = f;
  return true;
}

bool on_min_size(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  return integer(o.slab_min_size, kSlabMinSizeRange, v, n, e);
}

// memcached's -l: comma- (or semicolon-) separated items, repeatable; an
// argument given twice, or an item listed twice, is bound once (memcached
// skips a repeated argument).
bool on_listen(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  if (!o.listen) o.listen.emplace();
  if (std::find(o.listen_args.begin(), o.listen_args.end(), v) != o.listen_args.end()) return true;
  o.listen_args.emplace_back(v);
  while (true) {
    size_t comma = v.find_first_of(",;");
    std::string_view item = v.substr(0, comma);
    cli_listen l;
    std::string why;
    std::string warning;
    if (!parse_listen_address(item, kDefaultPort, l.address, &why, &warning)) return fail(e, n + ": " + why);
    if (!warning.empty()) o.listen_warnings.push_back(n + ": " + warning);
    item.remove_prefix(listen_prefix_length(item));  // "notls:", "proto[..]:", "tag[..]:"
    // An explicit port is one the text spelled out: "h:p" or "[v6]:p".
    size_t bracket = item.rfind(']');
    size_t colon = item.rfind(':');
    l.has_port = colon != std::string_view::npos &&
                 (bracket != std::string_view::npos ? colon > bracket : item.find(':') == colon);
    bool listed = false;
    for (const cli_listen& seen : *o.listen)
      listed = listed || (seen.address == l.address && seen.has_port == l.has_port);
    if (!listed) o.listen->push_back(l);
    if (comma == std::string_view::npos) break;
    v.remove_prefix(comma + 1);
  }
  return true;
}

bool on_unix_socket(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  if (v.empty() || v.size() > kMaxUnixPath) {
    return fail(e, n + ": expected a path of 1 to " + std::to_string(kMaxUnixPath) + " bytes");
  }
  o.unix_socket = std::string(v);
  return true;
}

// memcached's -a: octal, e.g. 700 or 0660.
bool on_unix_mask(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  unsigned mode = 0;
  if (!parse_octal_mode(v, mode)) {
    return fail(e, n + ": expected an octal mode from 0 to 777 (such as 700), got '" + std::string(v) + "'");
  }
  o.unix_mode = mode;
  return true;
}

bool on_verbose(cli_options& o, std::string_view, const std::string&, std::string*) {
  ++o.verbose;
  return true;
}
bool on_shutdown(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.enable_shutdown = true;
  return true;
}
bool on_disable_watch(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.disable_watch = true;
  return true;
}
bool on_disable_dumping(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.disable_dumping = true;
  return true;
}
bool on_disable_evictions(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.disable_evictions = true;
  return true;
}
bool on_disable_cas(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.disable_cas = true;
  return true;
}
bool on_disable_flush_all(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.disable_flush_all = true;
  return true;
}

// memcached's -D: the first character of the value (the rest is ignored, as
// memcached ignores it); its message for an empty one.
bool on_prefix_delimiter(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  if (v.empty()) return fail(e, n + ": No delimiter specified");
  o.prefix_delimiter = v.front();
  return true;
}

// memcached's -R, with its message for anything not above 0.
bool on_reqs_per_event(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  uint64_t count = 0;
  if (!parse_unsigned(v, count) || !kReqsPerEventRange.contains(count)) {
    return fail(e, n + ": Number of requests per event must be greater than 0 (and at most " +
                       std::to_string(kReqsPerEventRange.max) + "), got '" + std::string(v) + "'");
  }
  o.reqs_per_event = static_cast<unsigned>(count);
  return true;
}

// memcached's -B, with its message for another word.
bool on_protocol(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  kinds::binding_protocol b{};
  if (!from_string(v, b)) {
    return fail(e, n + ": Invalid value for binding protocol: " + std::string(v) +
                       " -- should be one of auto, binary, or ascii");
  }
  o.binding = b;
  return true;
}

bool on_help(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.help = true;
  return true;
}
bool on_version(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.version = true;
  return true;
}
bool on_check_config(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.check_config = true;
  return true;
}
bool on_preprocessed(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.preprocessed = true;
  return true;
}
bool on_config(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  if (v.empty()) return fail(e, n + ": expected a file name");
  o.config_path = std::string(v);
  return true;
}

bool on_metrics_listen(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  tcp_address a;
  std::string why;
  if (!parse_tcp_address(v, kDefaultMetricsPort, a, &why)) return fail(e, n + ": " + why);
  o.metrics_listen = a;
  return true;
}

bool on_takeover(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.takeover = true;
  return true;
}
bool on_takeover_socket(cli_options& o, std::string_view v, const std::string&, std::string*) {
  o.takeover_socket = std::string(v);
  return true;
}

bool on_enable_ssl(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.enable_ssl = true;
  return true;
}

// memcached's -Y FILE (ascii authentication) and -S (SASL on the binary
// protocol). The file is read when the server starts (instance.cc), with
// memcached's messages when it cannot be.
bool on_auth_file(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  if (v.empty()) return fail(e, n + ": expected a file name");
  o.auth_file = std::string(v);
  return true;
}
bool on_memory_file(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  if (v.empty()) return fail(e, n + ": expected a file name");
  o.memory_file = std::string(v);
  return true;
}
bool on_sasl(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.sasl = true;
  return true;
}

// memcached's -o: comma-separated sub-options, NAME or NAME=VALUE: the TLS
// ones (ssl_*, tls_config.h), then the others (extended_options.h).
bool on_extended(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  while (!v.empty()) {
    size_t comma = v.find(',');
    std::string_view item = v.substr(0, comma);
    size_t eq = item.find('=');
    const bool has_value = eq != std::string_view::npos;
    std::string_view name = item.substr(0, eq);
    std::string_view value = has_value ? item.substr(eq + 1) : std::string_view{};
    bool known = false;
    std::string why;
    tls_config check;  // validated here; applied over the file's in apply_overrides
    if (apply_tls_suboption(name, value, has_value, check, known, &why)) {
      o.tls_options.push_back({std::string(name), std::string(value), has_value});
    } else if (known) {
      return fail(e, n + ": " + why);
    } else if (!parse_extended_option(name, value, has_value, o.extended, &why)) {
      return fail(e, n + ": " + why);
    }
    if (comma == std::string_view::npos) break;
    v.remove_prefix(comma + 1);
  }
  return true;
}

// memcached's -N (NAPI ids for thread selection): taken, with a note.
bool on_napi_ids(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  uint64_t ids = 0;
  if (!parse_unsigned(v, ids) || ids == 0 || ids > 1024) {
    return fail(e, n + ": Maximum number of NAPI IDs must be greater than 0, got '" + std::string(v) + "'");
  }
  o.notes.push_back(n + " " + std::string(v) +
                    ": accepted, no effect: ithaca hands connections to workers round-robin, "
                    "not by the NIC queue they arrived on");
  return true;
}

bool on_license(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.license = true;
  return true;
}

// memcached's process flags (server/process_setup.h does what they say).
bool on_daemonize(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.daemonize = true;
  return true;
}
bool on_user(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  if (v.empty()) return fail(e, n + ": expected a user name");
  o.user = std::string(v);
  return true;
}
bool on_pid_file(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  if (v.empty()) return fail(e, n + ": expected a file name");
  o.pid_file = std::string(v);
  return true;
}
bool on_core_dumps(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.core_dumps = true;
  return true;
}
bool on_lock_memory(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.lock_memory = true;
  return true;
}
bool on_large_pages(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.large_pages = true;
  return true;
}

// A big_value route above `r` (mcrouter's wrapWithBigValueRoute, above its
// root).
void wrap_big_value(const cli_options& cli, route_config& r) {
  route_config b = module_node("big_value", route_format::Mcrouter, r.line,
                               {{"threshold", std::to_string(*cli.big_value_split_threshold)},
                                {"batch_size", std::to_string(cli.big_value_batch_size.value_or(10))},
                                {"hide_reply_flag", cli.big_value_hide_reply_flag ? "true" : "false"}});
  r.role = "target";
  b.children.push_back(std::move(r));
  r = std::move(b);
}

// A logging route above `r` (mcrouter's --enable-logging-route: its
// ProxyRoute wraps the root, big_value included, in a LoggingRoute).
void wrap_logging(route_config& r) {
  route_config l = module_node("logging", route_format::Mcrouter, r.line, {});
  r.role = "target";
  l.children.push_back(std::move(r));
  r = std::move(l);
}

// The listeners and pool settings mcrouter's flags give (mcrouter_cli.h):
// its ports (on every interface or on --listen-addresses) and inherited
// sockets replace the file's listeners; -t is read with the pools; the TKO
// flags and --enable-flush-cmd apply to every pool; --allow-only-gets puts an
// only_gets route above the tree (reads pass, the rest answered as null).
void apply_mcrouter_overrides(const cli_options& cli, config& c) {
  if (!cli.mcrouter_ports.empty() || !cli.listen_fds.empty()) {
    c.listen.tcp.clear();
    for (uint16_t port : cli.mcrouter_ports) {
      if (cli.listen_hosts.empty()) c.listen.tcp.push_back(tcp_address{"*", port});
      for (const std::string& h : cli.listen_hosts) c.listen.tcp.push_back(tcp_address{h, port});
    }
    c.listen.inherited_fds = cli.listen_fds;
  }
  if (cli.log_file) c.logging.file = *cli.log_file;
  c.server.enable_shutdown = true;  // mcrouter stops on the ascii `shutdown` command, with no flag
  c.router.mcrouter_asynclog_dir = cli.async_dir;
  c.router.mcrouter_asynclog_v2 = cli.asynclog_v2;
  c.router.mcrouter_router_name = cli.mcrouter_ports.empty() ? "0" : std::to_string(cli.mcrouter_ports.front());
  for (pool_config& p : c.router.pools) {
    if (cli.timeouts_until_tko) p.failure_limit = *cli.timeouts_until_tko;
    if (cli.target_max_shadow_requests) p.max_shadow_requests = *cli.target_max_shadow_requests;
    if (cli.probe_delay_initial_ms) p.retry_interval_ms = *cli.probe_delay_initial_ms;
    if (cli.enable_flush_cmd) p.allow_flush = true;
  }
  if (!cli.allow_only_gets) return;
  auto only_gets = [](route_config& r) {
    route_config gate = module_node("only_gets", route_format::Yaml, r.line);
    r.role = "child";
    gate.children.push_back(std::move(r));
    r = std::move(gate);
  };
  if (c.router.has_route) only_gets(c.router.route);
  for (listener_route& lr : c.router.listeners) only_gets(lr.route);
}

constexpr const char* kUnsupported = "is a memcached option ithaca does not support";

const cli_option kCliOptions[] = {
    {0, "config", true, on_config, nullptr},
    {0, "check-config", false, on_check_config, nullptr},
    {0, "preprocessed", false, on_preprocessed, nullptr},
    {0, "metrics-listen", true, on_metrics_listen, nullptr},
    {0, "takeover", false, on_takeover, nullptr},
    {0, "takeover-socket", true, on_takeover_socket, nullptr},
    {0, "route-prefix", true, on_route_prefix, nullptr},
    {0, "send-invalid-route-to-default", false, on_send_invalid_route, nullptr},
    {0, "config-params", true, on_config_params, nullptr},
    {0, "pem-cert-path", true, on_pem_cert, nullptr},
    {0, "pem-key-path", true, on_pem_key, nullptr},
    {0, "pem-ca-path", true, on_pem_ca, nullptr},
    {0, "big-value-split-threshold", true, on_big_value_threshold, nullptr},
    {0, "big-value-batch-size", true, on_big_value_batch, nullptr},
    {0, "big-value-hide-reply-flag", false, on_big_value_hide, nullptr},
    {0, "enable-logging-route", false, on_enable_logging_route, nullptr},
    {0, "disable-reload-configs", false, on_disable_reload_configs, nullptr},
    {'h', "help", false, on_help, nullptr},
    {'V', "version", false, on_version, nullptr},
    {'p', "port", true, on_port, nullptr},
    {'l', "listen", true, on_listen, nullptr},
    {'s', "unix-socket", true, on_unix_socket, nullptr},
    {'a', "unix-mask", true, on_unix_mask, nullptr},
    {'U', "udp-port", true, on_udp_port, nullptr},
    {'m', "memory-limit", true, on_memory_limit, nullptr},
    {'t', "threads", true, on_threads, nullptr},
    {'c', "conn-limit", true, on_conn_limit, nullptr},
    {'I', "max-item-size", true, on_item_size, nullptr},
    {'b', "listen-backlog", true, on_backlog, nullptr},
    {'v', "verbose", false, on_verbose, nullptr},
    {'A', "enable-shutdown", false, on_shutdown, nullptr},
    // memcached 1.6.45's flags (-e, -S and -Y refused with the reason until they are taken).
    {'d', "daemon", false, on_daemonize, nullptr},
    {'u', "user", true, on_user, nullptr},
    {'P', "pidfile", true, on_pid_file, nullptr},
    {'r', "enable-coredumps", false, on_core_dumps, nullptr},
    {'M', "disable-evictions", false, on_disable_evictions, nullptr},
    {'k', "lock-memory", false, on_lock_memory, nullptr},
    {'i', "license", false, on_license, nullptr},
    {'f', "slab-growth-factor", true, on_growth_factor, nullptr},
    {'n', "slab-min-size", true, on_min_size, nullptr},
    {'L', "enable-largepages", false, on_large_pages, nullptr},
    {'D', nullptr, true, on_prefix_delimiter, nullptr},
    {'R', "max-reqs-per-event", true, on_reqs_per_event, nullptr},
    {'C', "disable-cas", false, on_disable_cas, nullptr},
    {'B', "protocol", true, on_protocol, nullptr},
    {'S', "enable-sasl", false, on_sasl, nullptr},
    {'F', "disable-flush-all", false, on_disable_flush_all, nullptr},
    {'X', "disable-dumping", false, on_disable_dumping, nullptr},
    {'W', "disable-watch", false, on_disable_watch, nullptr},
    {'Y', "auth-file", true, on_auth_file, nullptr},
    {'e', "memory-file", true, on_memory_file, nullptr},
    {'Z', "enable-ssl", false, on_enable_ssl, nullptr},
    {'o', "extended", true, on_extended, nullptr},
    {'N', "napi-ids", true, on_napi_ids, nullptr},
};

const cli_option* find_short(char c) {
  for (const cli_option& o : kCliOptions) {
    if (o.short_name == c) return &o;
  }
  return nullptr;
}

const cli_option* find_long(std::string_view name) {
  for (const cli_option& o : kCliOptions) {
    if (o.long_name != nullptr && name == o.long_name) return &o;
  }
  return nullptr;
}

std::string spelled(const cli_option& o) {
  std::string s;
  if (o.short_name != 0) s = std::string("-") + o.short_name;
  if (o.long_name != nullptr) {
    s += s.empty() ? "--" : " (--";
    s += o.long_name;
    if (o.short_name != 0) s += ")";
  }
  return s;
}

bool refuse(const cli_option& o, std::string* error) { return fail(error, spelled(o) + ": " + o.refusal); }

}  // namespace

// argv into `out` (the contract is in cli.h): memcached mode from argv[0] or
// --memcached, then each option looked up in the option table and handed to
// its reader; short options may be bundled and take their value attached or
// as the next word. `out` is written only on success. [main thread, before
// anything starts; pure] False with *error on the first bad option.
bool parse_args(int argc, const char* const* argv, cli_options& out, std::string* error) {
  cli_options o;
  int first = 1;
  if (argc > 0 && argv[0] != nullptr) {
    std::string_view name = argv[0];
    if (size_t slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
    o.memcached_mode = name == "memcached";
    o.mcrouter_mode = name == "mcrouter";
  }
  if (argc > 1 && std::string_view(argv[1]) == "--mcrouter") {
    o.mcrouter_mode = true;
    first = 2;
  }
  if (o.mcrouter_mode) {
    if (!parse_mcrouter_args(argc, argv, first, o, error)) return false;
    out = std::move(o);
    return true;
  }
  if (argc > 1 && std::string_view(argv[1]) == "--memcached") {
    o.memcached_mode = true;
    first = 2;
  }
  for (int i = first; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.size() >= 2 && arg.substr(0, 2) == "--") {
      std::string_view body = arg.substr(2);
      size_t eq = body.find('=');
      std::string_view name = body.substr(0, eq);
      const cli_option* spec = find_long(name);
      // memcached mode: ithaca's own options (the long-only rows) are unknown,
      // but for the upgrade in place (memcached has nothing like it, and
      // SIGUSR2 starts the same command line with --takeover added).
      const bool upgrade = name == "takeover" || name == "takeover-socket";
      if (o.memcached_mode && spec != nullptr && spec->short_name == 0 && !upgrade) spec = nullptr;
      std::string shown = "--" + std::string(name);
      if (spec == nullptr) return fail(error, "unknown option '" + shown + "' (see -h)");
      if (spec->refusal != nullptr) return refuse(*spec, error);
      std::string_view value;
      if (spec->takes_value) {
        if (eq != std::string_view::npos) {
          value = body.substr(eq + 1);
        } else if (i + 1 < argc) {
          value = argv[++i];
        } else {
          return fail(error, shown + ": missing value");
        }
      } else if (eq != std::string_view::npos) {
        return fail(error, shown + ": takes no value");
      }
      if (!spec->handle(o, value, shown, error)) return false;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      return fail(error, "unexpected argument '" + std::string(arg) + "' (see -h)");
    }
    // Short options; flags may be bundled (-vv, -Av), a value may be attached
    // (-p11211) or follow (-p 11211).
    for (size_t j = 1; j < arg.size(); ++j) {
      const cli_option* spec = find_short(arg[j]);
      std::string shown = std::string("-") + arg[j];
      if (spec == nullptr) return fail(error, "unknown option '" + shown + "' (see -h)");
      if (spec->refusal != nullptr) return refuse(*spec, error);
      if (!spec->takes_value) {
        if (!spec->handle(o, {}, shown, error)) return false;
        continue;
      }
      std::string_view value = arg.substr(j + 1);
      if (value.empty()) {
        if (i + 1 >= argc) return fail(error, shown + ": missing value");
        value = argv[++i];
      }
      if (!spec->handle(o, value, shown, error)) return false;
      break;
    }
  }
  if (o.preprocessed && (!o.check_config || o.config_path.empty())) {
    return fail(error, "--preprocessed goes with --check-config --config FILE (an mcrouter JSON config)");
  }
  if (o.unix_socket && (o.listen || o.port || o.udp_port)) {
    return fail(error,
                "-s: a unix socket replaces the network listeners; do not combine it "
                "with -l, -p or -U (use the config file for both)");
  }
  for (std::string& note : o.extended.notes) o.notes.push_back(std::move(note));
  o.extended.notes.clear();
  // memcached's refusals of UDP beside authentication, in its words (it
  // checks them once its flags are read: the order they came in is moot).
  std::string why = auth_flag_conflict(o.sasl, o.auth_file.has_value(), o.udp_port.value_or(0));
  if (!why.empty()) return fail(error, why);
  // A -B given beside them must be theirs: memcached refuses "-B auto" too.
  if (o.binding && o.sasl && *o.binding != kinds::binding_protocol::Binary) return fail(error, kSaslBindingConflict);
  if (o.binding && o.auth_file && *o.binding != kinds::binding_protocol::Ascii) {
    return fail(error, kAsciiAuthBindingConflict);
  }
  out = std::move(o);
  return true;
}

// The flags given over the file's settings, field by field (a flag not given
// leaves the file's value): the start and every SIGHUP reload apply them, so a
// reload never loses what the command line said. [the thread loading the config]
void apply_overrides(const cli_options& cli, config& c) {
  listen_config& l = c.listen;
  if (cli.unix_socket) {
    l.tcp.clear();
    l.unix_paths = {*cli.unix_socket};
    l.udp_port = 0;
  }
  if (cli.listen) {
    uint16_t fallback = cli.port ? *cli.port : l.tcp.empty() ? kDefaultPort : l.tcp.front().port;
    l.tcp.clear();
    for (const cli_listen& item : *cli.listen) {
      tcp_address a = item.address;
      if (!item.has_port) a.port = fallback;
      l.tcp.push_back(a);
    }
    l.inter.clear();
    for (const std::string& arg : cli.listen_args) l.inter += (l.inter.empty() ? "" : ",") + arg;
  } else if (cli.port) {
    for (tcp_address& a : l.tcp) a.port = *cli.port;
  }
  if (cli.udp_port) l.udp_port = *cli.udp_port;
  if (cli.unix_mode) l.unix_mode = *cli.unix_mode;
  if (cli.backlog) l.backlog = *cli.backlog;

  if (cli.threads) c.server.workers = *cli.threads;
  if (cli.max_connections) c.server.max_connections = *cli.max_connections;
  if (cli.enable_shutdown) c.server.enable_shutdown = true;
  if (cli.disable_watch) c.server.enable_watch = false;
  if (cli.disable_dumping) c.server.enable_dumping = false;
  if (cli.disable_flush_all) c.server.enable_flush_all = false;
  if (cli.prefix_delimiter) {
    c.server.prefix_delimiter = *cli.prefix_delimiter;
    c.server.detail_enabled = true;  // memcached's -D turns per-prefix stats on
  }
  if (cli.reqs_per_event) c.server.reqs_per_event = *cli.reqs_per_event;
  if (cli.binding) c.server.binding = *cli.binding;
  if (cli.disable_evictions) c.cache.evictions = false;
  if (cli.disable_cas) c.cache.cas_enabled = false;
  if (cli.auth_file) c.server.auth_file = *cli.auth_file;
  if (cli.memory_file) c.cache.memory_file = *cli.memory_file;
  if (cli.sasl) c.server.sasl = true;
  if (cli.sasl_pwdb) c.server.sasl_pwdb = *cli.sasl_pwdb;

  if (cli.memory_limit) c.cache.memory_limit = *cli.memory_limit;
  if (cli.slab_growth_factor) c.cache.slab_growth_factor = *cli.slab_growth_factor;
  if (cli.slab_min_size) c.cache.slab_min_size = *cli.slab_min_size;
  if (cli.item_size_max) {
    c.cache.item_size_max = *cli.item_size_max;
    // memcached users lower -I without knowing about large values; follow.
    c.cache.large_value_threshold = std::min(c.cache.large_value_threshold, *cli.item_size_max);
  }

  // -o ssl_* replace the file's tls settings they name; -Z turns TLS on.
  for (const cli_suboption& so : cli.tls_options) {
    bool known = false;
    apply_tls_suboption(so.name, so.value, so.has_value, c.tls, known, nullptr);  // checked by parse_args
  }
  if (cli.enable_ssl) c.tls.enabled = true;
  apply_extended(cli.extended, c);
  // mcrouter's certificate flags: router.tls, which TLS pools take.
  if (cli.route_prefix) c.router.default_route = *cli.route_prefix;
  if (cli.send_invalid_route_to_default) c.router.send_invalid_route_to_default = true;
  if (cli.pem_cert_path) c.router.tls.chain_cert = *cli.pem_cert_path;
  if (cli.pem_key_path) c.router.tls.key = *cli.pem_key_path;
  if (cli.pem_ca_path) c.router.tls.ca_cert = *cli.pem_ca_path;
  resolve_pool_tls(c.router);
  if (cli.big_value_split_threshold.value_or(0) != 0) {
    if (c.router.has_route) wrap_big_value(cli, c.router.route);
    for (listener_route& lr : c.router.listeners) wrap_big_value(cli, lr.route);
  }
  if (cli.enable_logging_route) {
    if (c.router.has_route) wrap_logging(c.router.route);
    for (listener_route& lr : c.router.listeners) wrap_logging(lr.route);
  }
  if (cli.disable_reload_configs) c.server.reload_on_change = false;
  if (cli.mcrouter_mode) apply_mcrouter_overrides(cli, c);

  process_config& p = c.process;
  if (cli.user) p.user = *cli.user;
  if (cli.pid_file) p.pid_file = *cli.pid_file;
  if (cli.core_dumps) p.core_dumps = true;
  if (cli.lock_memory) p.lock_memory = true;
  if (cli.large_pages) p.large_pages = true;

  if (cli.metrics_listen) {
    c.metrics.enabled = true;
    c.metrics.listen = *cli.metrics_listen;
  }
  if (cli.takeover_socket) {
    c.takeover.socket_set = true;
    c.takeover.socket = *cli.takeover_socket;
  }

  switch (std::min(cli.verbose, 3u)) {
    case 0: break;
    case 1: c.logging.level = log_level::Info; break;
    case 2: c.logging.level = log_level::Debug; break;
    default: c.logging.level = log_level::Trace; break;
  }
}

bool make_config(const cli_options& cli, config& out, std::string* error, bool allow_empty_file,
                 const std::string* dumped) {
  config c;
  timespec read_at{};
  ::clock_gettime(CLOCK_REALTIME, &read_at);  // the fine clock: a file's mtime (coarse) is never later for an earlier write
  // What an mcrouter config's preprocessor reads of the command line
  // (mcrouter_jsonm.h), there before the file is read; the flags are
  // applied again after it, over what the file says.
  if (cli.threads) c.server.workers = *cli.threads;
  if (cli.route_prefix) c.router.default_route = *cli.route_prefix;
  c.router.config_params = cli.config_params;
  if (cli.server_timeout_ms) c.router.mcrouter_server_timeout_ms = *cli.server_timeout_ms;
  c.router.mcrouter_asynclog_disable = cli.asynclog_disable;
  if (!cli.config_path.empty() && !load_config(cli.config_path, c, error, allow_empty_file, dumped)) {
    // mcrouter's words for a config it cannot load (CarbonRouterInstance:
    // "Can not read config from file:PATH"), which its users look for;
    // ithaca's reason follows.
    if (cli.mcrouter_mode && error) *error = "Can not read config from file:" + cli.config_path + ": " + *error;
    return false;
  }
  if (cli.config_path.empty() && !cli.config_text.empty() &&
      !load_config_text(cli.config_text, "--config", c, error, allow_empty_file)) {
    return false;
  }
  apply_overrides(cli, c);
  validation_error v;
  if (!validate(c, &v)) {
    return fail(
        error, (cli.config_path.empty() ? std::string("command line: ") : "with the command-line flags: ") + v.message);
  }
  // Set here: the file's reader starts from a fresh config.
  c.read_at_ns = static_cast<int64_t>(read_at.tv_sec) * 1000000000 + read_at.tv_nsec;
  out = std::move(c);
  return true;
}

// --check-config --preprocessed: the expansion, pretty with sorted keys as
// mcrouter's preprocessed config is, or the preprocessor's file:line: error.
static int print_preprocessed(const cli_options& cli, std::string* message) {
  std::string text;
  std::string error;
  if (!read_config_file(cli.config_path, text, &error)) {
    if (message) *message = error;
    return 1;
  }
  if (!looks_like_mcrouter_json(text, cli.config_path)) {
    if (message) *message = cli.config_path + ": --preprocessed: not an mcrouter JSON config";
    return 1;
  }
  jsonm::value v;
  int line = 0;
  const mcrouter_params params{cli.threads.value_or(config().server.workers), cli.route_prefix.value_or(""),
                               cli.config_params};
  if (!mcrouter_expand(text, cli.config_path, params, v, &error, &line)) {
    if (message) *message = cli.config_path + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + error;
    return 1;
  }
  if (message) *message = jsonm::to_json(v, /*pretty=*/true);
  return 0;
}

int check_config(const cli_options& cli, std::string* message, std::vector<std::string>* warnings) {
  if (cli.preprocessed) return print_preprocessed(cli, message);
  config c;
  std::string error;
  if (!make_config(cli, c, &error)) {
    if (message) *message = error;
    return 1;
  }
  // What the start would refuse too, looked at without starting (preflight.h).
  preflight_report r = preflight(c);
  if (warnings) *warnings = std::move(r.warnings);
  if (!r.error.empty()) {
    if (message) *message = r.error;
    return 1;
  }
  if (message) *message = "configuration OK";
  return 0;
}

std::string version_string() { return std::string("ithaca ") + ITHACA_VERSION; }

// The text of `ithaca -h`: one raw string, the flags grouped as the README
// lists them (long because it is the help text, not because it does much).
// [any thread; pure]
std::string usage() {
  return version_string() + R"( - a memcached-compatible cache and proxy

usage: ithaca [--config FILE] [FLAGS]

Settings come from built-in defaults, then the YAML file, then these flags.

  --config FILE             read settings from FILE (see config/ithaca.yaml)
  --check-config            validate the settings, print "configuration OK" or
                            the error, exit 0 or 1
  --preprocessed            with --check-config: print the mcrouter JSON
                            config as its macros expand (keys sorted), or the
                            error, exit 0 or 1
  --metrics-listen=HOST[:PORT]
                            serve Prometheus metrics (GET /metrics) over HTTP
                            on this address (default port 9150; default off)
  --takeover                start by taking the place of the running ithaca
                            (its listeners, its store) through its takeover
                            socket; it exits once this one serves
  --takeover-socket=PATH    the takeover socket (YAML: takeover.socket)
  --route-prefix=/REGION/CLUSTER/
                            mcrouter's -R: the routing prefix of keys that
                            carry none (YAML: router.default_route)
  --send-invalid-route-to-default
                            mcrouter's: a key whose routing prefix no route
                            has goes to the default route, not an error
  --config-params=NAME:VALUE[,NAME:VALUE]
                            mcrouter's: strings an mcrouter config's
                            preprocessor substitutes for %NAME%
  --pem-cert-path=FILE, --pem-key-path=FILE, --pem-ca-path=FILE
                            mcrouter's: the client certificate, its key and
                            the CA for pools with TLS (YAML: router.tls)
  --big-value-split-threshold=BYTES, --big-value-batch-size=N,
  --big-value-hide-reply-flag
                            mcrouter's: values over BYTES are stored as
                            chunks, N at a time (default 10), by a big_value
                            route above the routed tree (0: off)
  --enable-logging-route    mcrouter's: a logging route above the routed
                            tree logs every hit and stored write
  --disable-reload-configs  mcrouter's: do not reload when the config file
                            changes (YAML: server.reload_on_change)

memcached 1.6's flags, with memcached's meaning (they override the file):
  -p, --port=PORT           TCP port of every listen address (default 11211;
                            0 = a free port)
  -U, --udp-port=PORT       UDP port on the listen addresses (default 0, off)
  -s, --unix-socket=PATH    listen on this unix socket only (no TCP, no UDP);
                            an existing path is replaced only if it is a
                            stale socket
  -a, --unix-mask=MODE      permissions of the unix socket, in octal
                            (default 700, whatever the umask)
  -A, --enable-shutdown     accept the ascii "shutdown" command
  -l, --listen=ADDR[,ADDR]  listen on these addresses (ADDR or ADDR:PORT,
                            [v6]:PORT; repeatable; memcached's
                            proto[NAME]:tag[NAME]: prefixes too); default every
                            IPv4 and IPv6 interface
  -d, --daemon              run as a daemon (the parent exits once listening)
  -r, --enable-coredumps    raise the core file limit to its maximum
  -u, --user=USER           switch to USER after binding (when run as root)
  -m, --memory-limit=MB     item memory in megabytes (default 64; 2g also works)
  -M, --disable-evictions   answer "SERVER_ERROR out of memory storing object"
                            instead of evicting
  -c, --conn-limit=N        max simultaneous connections (default 1024)
  -k, --lock-memory         lock all paged memory (mlockall)
  -v, --verbose             log level info (-vv debug, -vvv trace; default warn)
  -h, --help                print this help and exit
  -i, --license             print the licenses of what ithaca links and exit
  -V, --version             print the version and exit
  -P, --pidfile=FILE        write the process id to FILE (removed at exit)
  -f, --slab-growth-factor=F  growth of memcached's size classes, which
                            `stats slabs` and `stats items` count items by
                            (default 1.25; ithaca allocates with malloc)
  -n, --slab-min-size=BYTES key + value + flags room of the smallest class
                            (default 48)
  -L, --enable-largepages   back the store's memory with transparent huge
                            pages where the kernel allows
  -D CHAR                   prefix delimiter of per-prefix stats (stats detail),
                            which it turns on (default ':')
  -t, --threads=N           worker threads (default 4)
  -R, --max-reqs-per-event=N  requests one connection runs before the others
                            on its worker get a turn (default 20)
  -C, --disable-cas         no CAS: cas values 0, the cas command refused
  -b, --listen-backlog=N    listen backlog (default 1024)
  -B, --protocol=NAME       ascii, binary or auto (default auto: ascii, meta
                            and binary detected per connection)
  -I, --max-item-size=SIZE  max item size, bytes or with k/m suffix (default 1m,
                            min 1k, max 1024m); also caps large_value_threshold
  -S, --enable-sasl         SASL (PLAIN) on the binary protocol (binary only),
                            the users in the file $MEMCACHED_SASL_PWDB names
                            (user:password lines; YAML: server.sasl_pwdb)
  -F, --disable-flush-all   refuse flush_all
  -X, --disable-dumping     refuse stats cachedump, stats detail dump and
                            lru_crawler metadump / mgdump
  -W, --disable-watch       refuse watch (live logging)
  -Y, --auth-file=FILE      ascii authentication: a client first sends a set
                            whose value is "user pass" (FILE: user:pass lines);
                            ascii only
  -e, --memory-file=FILE    items in FILE (tmpfs or DAX), kept across a SIGUSR1
                            stop and served again by the next start with the
                            same file and settings (cache.memory_file)
  -Z, --enable-ssl          TLS on every TCP listener but those given as
                            -l notls:HOST:PORT (unix sockets and UDP stay plain);
                            -l btls:HOST:PORT asks no client certificate,
                            -l mtls:HOST:PORT requires one (from ssl_ca_cert)
  -N, --napi-ids=N          accepted; ithaca spreads connections round-robin
  -o, --extended=OPT[,OPT]  memcached's extended options:
     ssl_chain_cert=FILE,ssl_key=FILE,ssl_ca_cert=FILE,ssl_verify_mode=0..3,
     ssl_min_version=0..3|tlsv1.2|tlsv1.3,ssl_ciphers=LIST,ssl_keyformat=1|2,
     ssl_wbuf_size=KB,ssl_session_cache,ssl_kernel_tls
                            TLS (YAML: the `tls:` section)
     hashpower=N            2^N hash buckets at start, 12..32 (cache.hash_power)
     no_hashexpand          the table keeps that size (cache.hash_expand)
     idle_timeout=SECONDS   close clients idle this long (server.idle_timeout)
     no_lru_crawler, lru_crawler
                            lru_crawler commands off / on (cache.lru_crawler)
     ext_path=FILE:SIZE     large values on disk in FILE's directory, SIZE
                            budget (cache.large_value_dir, _disk_limit)
     ext_item_size=BYTES    values above this go there (large_value_threshold)
     maxconns_fast, modern, no_modern, slab_reassign, slab_automove[=N],
     slab_automove_ratio, slab_automove_window, slab_sizes, slab_chunk_max,
     tail_repair_time, hash_algorithm, lru_crawler_sleep, lru_crawler_tocrawl,
     [no_]lru_maintainer, hot_lru_pct, warm_lru_pct, hot_max_factor,
     warm_max_factor, temporary_ttl, watcher_logbuf_size, worker_logbuf_size,
     track_sizes, [no_]inline_ascii_resp, no_chunked_items, [no_]drop_privileges,
     read_buf_mem_limit, resp_obj_mem_limit, proxy_arg, proxy_uring,
     proxy_memprofile, sock_cookie_id, the other ext_* and
     slab_automove_freeratio
                            checked as memcached checks them and accepted; the
                            start logs what ithaca does instead of each
     proxy_config           refused: ithaca's router is configured in YAML
)";
}

std::string license_text() {
  return version_string() + R"(
ithaca links these libraries, each under its own license:
  Boost.Context   Boost Software License 1.0
  liburing        MIT (or LGPL-2.1)
  yaml-cpp        MIT
  spdlog, fmt     MIT
  OpenSSL         Apache License 2.0
  libsystemd      LGPL-2.1 or later (where built with it)
Nothing else is bundled (third_party/README.md).
)";
}

}  // namespace ithaca::config
