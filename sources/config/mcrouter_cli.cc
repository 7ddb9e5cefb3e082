#include "mcrouter_cli.h"

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

#include "cli.h"
#include "fail.h"

namespace ithaca::config {

namespace {

// A whole number, the only form mcrouter's numeric options take.
bool mcrouter_count(std::string_view v, const std::string& n, std::string* e, uint64_t& out) {
  auto r = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size()) return fail(e, n + ": expected a whole number");
  return true;
}

}  // namespace

// mcrouter's --pem-cert-path / --pem-key-path / --pem-ca-path.
bool on_pem_cert(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  if (v.empty()) return fail(e, n + ": expected a file name");
  o.pem_cert_path = std::string(v);
  return true;
}

bool on_pem_key(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  if (v.empty()) return fail(e, n + ": expected a file name");
  o.pem_key_path = std::string(v);
  return true;
}

bool on_pem_ca(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  if (v.empty()) return fail(e, n + ": expected a file name");
  o.pem_ca_path = std::string(v);
  return true;
}

// mcrouter's --route-prefix (its -R; memcached's -R is another flag) and
// --send-invalid-route-to-default: router.default_route and
// router.send_invalid_route_to_default.
bool on_route_prefix(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  if (v.empty()) return fail(e, n + ": expected a routing prefix such as /region/cluster/");
  o.route_prefix = std::string(v);
  return true;
}

// mcrouter's --config-params name1:value1,name2:value2 (each value a string).
bool on_config_params(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  o.config_params.clear();
  while (!v.empty()) {
    const size_t comma = v.find(',');
    const std::string_view item = v.substr(0, comma);
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return fail(e, n + ": '" + std::string(item) + "': expected name:value (pairs separated by commas)");
    }
    o.config_params.emplace_back(std::string(item.substr(0, colon)), std::string(item.substr(colon + 1)));
    v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
  }
  return true;
}

bool on_send_invalid_route(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.send_invalid_route_to_default = true;
  return true;
}

bool on_disable_reload_configs(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.disable_reload_configs = true;
  return true;
}

// mcrouter's --big-value-split-threshold / --big-value-batch-size (whole
// numbers) and --big-value-hide-reply-flag.
bool big_value_count(std::string_view v, const std::string& n, std::string* e, std::optional<uint64_t>& out) {
  uint64_t x = 0;
  if (!mcrouter_count(v, n, e, x)) return false;
  out = x;
  return true;
}

bool on_big_value_threshold(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  return big_value_count(v, n, e, o.big_value_split_threshold);
}

bool on_big_value_batch(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  return big_value_count(v, n, e, o.big_value_batch_size);
}

bool on_big_value_hide(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.big_value_hide_reply_flag = true;
  return true;
}

bool on_enable_logging_route(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.enable_logging_route = true;
  return true;
}

namespace {

// mcrouter's options that change nothing ithaca does (its fiber, thrift,
// QoS, ACL, logging-pipeline and rxmit tunables): accepted so an mcrouter
// command line starts, each named in the start's log. Toggles take no value
// unless written `--name=value`; the others take one.
constexpr std::string_view kMcrouterInertToggles[] = {
    "acl-checker-enable",
    "acl-checker-enforce",
    "constantly-reload-configs",
    "delete-carbon-instance-upon-init-failure",
    "disable-failure-logging",
    "disable-fibers-use-guard-pages",
    "disable-request-deadline-check",
    "disable-send-to-main-shard-split",
    "disable-shard-split-route",
    "disable-tko-tracking",
    "dump_preprocessed_config_enabled",
    "enable-axonlog",
    "enable-compression",
    "enable-pass-through-mode",
    "enable-qos",
    "enable-server-compression",
    "enable-service-router",
    "enable-ssl-tfo",
    "external-carbon-connection-logging-enabled",
    "force-same-thread",
    "group-remote-errors",
    "jemalloc-nodump-buffers",
    "key-client-binding-enable",
    "key-client-binding-nonlookaside-enable",
    "prefix-acl-checker-enable",
    "remote-thread",
    "retain-source-ip",
    "ssl-connection-cache",
    "ssl-handshake-offload",
    "ssl-require-peer-certs",
    "ssl-service-identity-authorization-enforce",
    "ssl-service-identity-authorization-log",
    "ssl-use-ktls12",
    "ssl-verify-peers",
    "test-mode",
    "thread-affinity",
    "use-mux-io-thread-pool",
    "use-thrift",
};
constexpr std::string_view kMcrouterInertValues[] = {
    "additional-ssl-service-identities",
    "carbon-router-name",
    "client-timeout",
    "collect-rxmit-stats-every-hz",
    "connect-timeout-retries",
    "core-multiplier",
    "core-multiplier-threshold",
    "cross-cluster-timeout-ms",
    "cross-region-timeout-ms",
    "debug-fifo-root",
    "default-qos-class",
    "default-qos-path",
    "external-carbon-connection-log-max-burst",
    "external-carbon-connection-log-rate-per-hour",
    "external-carbon-connection-log-sample-rate",
    "fibers-max-pool-size",
    "fibers-pool-resize-period-ms",
    "fibers-record-stack-size-every",
    "fibers-stack-size",
    "file-observer-poll-period-ms",
    "file-observer-sleep-before-update-ms",
    "keepalive-count",
    "keepalive-idle",
    "keepalive-interval",
    "logging-rtt-outlier-threshold-us",
    "max-client-outstanding-reqs",
    "max-conns",
    "max-no-flush-event-loops",
    "max-rxmit-reconnect-threshold",
    "max-shadow-token-map-size",
    "max_preprocessed_config_history",
    "min-rxmit-reconnect-threshold",
    "num-listening-sockets",
    "post-reconfiguration-delay-ms",
    "probe-timeout-max",
    "proxy-cpu-interval-s",
    "proxy-max-inflight-requests",
    "proxy-max-inflight-shadow-requests",
    "proxy-max-throttled-requests",
    "reconfiguration-delay-ms",
    "reconfiguration-jitter-ms",
    "reset-inactive-connection-interval",
    "rxmit-latency-deviation-us",
    "server-load-interval-ms",
    "server-pem-ca-path",
    "server-pem-cert-path",
    "server-pem-key-path",
    "ssl-port",
    "ssl-service-identity",
    "stats-async-queue-length",
    "target-max-inflight-requests",
    "target-max-pending-requests",
    "tcp-listen-backlog",
    "tcp-rto-min",
    "tcp-zero-copy-threshold",
    "tfo-queue-size",
    "thrift-compression-threshold",
    "thrift-listen-sock-fd",
    "thrift-port",
    "tls-ticket-key-seed-path",
    "unix-domain-sock",
    "waiting-request-timeout-ms",
    "within-cluster-timeout-ms",
    "xdp-tx-truncate-bytes",
};

using mcrouter_handler = bool (*)(cli_options& o, std::string_view value, const std::string& name, std::string* error);

struct mcrouter_option {
  char short_name;  // 0: long only
  const char* long_name;
  bool toggle;  // no value unless `--name=value`
  mcrouter_handler handle;
};

bool mcr_config(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  // "file:PATH" or the JSON itself (mcrouter's --config).
  if (v.starts_with("file:")) {
    o.config_path = std::string(v.substr(5));
    if (o.config_path.empty()) return fail(e, n + ": expected file:PATH or a JSON config");
    return true;
  }
  if (v.empty()) return fail(e, n + ": expected file:PATH or a JSON config");
  o.config_text = std::string(v);
  o.config_path.clear();
  return true;
}
bool mcr_config_file(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  if (v.empty()) return fail(e, n + ": expected a file name");
  if (o.config_path.empty() && o.config_text.empty()) o.config_path = std::string(v);  // --config wins
  return true;
}
bool mcr_config_str(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  if (v.empty()) return fail(e, n + ": expected a JSON config");
  if (o.config_path.empty() && o.config_text.empty()) o.config_text = std::string(v);
  return true;
}
bool mcr_port(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  uint64_t p = 0;
  if (!mcrouter_count(v, n, e, p)) return false;
  if (p == 0 || p > 65535) return fail(e, n + ": expected a port from 1 to 65535");
  o.mcrouter_ports.push_back(static_cast<uint16_t>(p));
  return true;
}
bool mcr_listen_addresses(cli_options& o, std::string_view v, const std::string&, std::string*) {
  o.listen_hosts.clear();
  while (!v.empty()) {
    const size_t comma = v.find(',');
    if (std::string_view h = v.substr(0, comma); !h.empty()) o.listen_hosts.emplace_back(h);
    v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
  }
  return true;
}
bool mcr_listen_fd(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  uint64_t fd = 0;
  if (!mcrouter_count(v, n, e, fd)) return false;
  if (fd < 3 || fd > 1u << 20) return fail(e, n + ": expected a listening socket's descriptor");
  o.listen_fds.push_back(static_cast<int>(fd));
  return true;
}
bool mcr_log_path(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  if (v.empty()) return fail(e, n + ": expected a file name");
  o.log_file = std::string(v);
  return true;
}
bool mcr_server_timeout(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  uint64_t ms = 0;
  if (!mcrouter_count(v, n, e, ms)) return false;
  o.server_timeout_ms = ms == 0 ? 1 : ms;
  return true;
}
bool mcr_timeouts_until_tko(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  uint64_t count = 0;
  if (!mcrouter_count(v, n, e, count)) return false;
  o.timeouts_until_tko = static_cast<unsigned>(count == 0 ? 1 : count);
  return true;
}
bool mcr_probe_initial(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  uint64_t ms = 0;
  if (!mcrouter_count(v, n, e, ms)) return false;
  o.probe_delay_initial_ms = ms;
  return true;
}
bool mcr_max_shadow(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  uint64_t count = 0;
  if (!mcrouter_count(v, n, e, count)) return false;
  if (count > 1u << 20) return fail(e, n + ": expected 0 (no bound) to 1048576");
  o.target_max_shadow_requests = static_cast<unsigned>(count);
  return true;
}
bool mcr_runtime_vars(cli_options& o, std::string_view v, const std::string&, std::string*) {
  o.runtime_vars_file = std::string(v);  // "" (mcrouter's default): none
  return true;
}
bool mcr_pool_stats(cli_options& o, std::string_view v, const std::string&, std::string*) {
  o.pool_stats_file = std::string(v);  // "" (mcrouter's default): no groups
  return true;
}
bool mcr_threads(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  if (v == "auto") return true;  // the config's (or ithaca's) worker count
  uint64_t t = 0;
  if (!mcrouter_count(v, n, e, t)) return false;
  if (t == 0 || t > 256) return fail(e, n + ": expected 1 to 256 threads");
  o.threads = static_cast<unsigned>(t);
  return true;
}
bool mcr_flush(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.enable_flush_cmd = true;
  return true;
}
bool mcr_async_dir(cli_options& o, std::string_view v, const std::string&, std::string*) {
  o.async_dir = std::string(v);
  return true;
}
bool mcr_asynclog_v2(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.asynclog_v2 = true;
  return true;
}
bool mcr_asynclog_disable(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.asynclog_disable = true;
  return true;
}
bool mcr_only_gets(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.allow_only_gets = true;
  return true;
}
bool mcr_validate(cli_options& o, std::string_view v, const std::string& n, std::string*) {
  // exit (the default): check and exit, as --check-config; run: start as usual
  // (the start refuses an invalid config anyway).
  if (v.empty() || v == "exit") {
    o.check_config = true;
  } else if (v != "run") {
    o.notes.push_back("Invalid argument for " + n + ": '" + std::string(v) + "'. Ignoring the option.");
  }
  return true;
}
bool mcr_help(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.help = true;
  return true;
}
bool mcr_version(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.version = true;
  return true;
}
bool mcr_verbosity(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  uint64_t level = 0;
  if (!mcrouter_count(v, n, e, level)) return false;
  o.verbose = static_cast<unsigned>(level > 3 ? 3 : level);
  return true;
}
bool mcr_dump_root(cli_options& o, std::string_view v, const std::string&, std::string*) {
  o.config_dump_root = std::string(v);  // "" turns it off, as in mcrouter
  return true;
}
bool mcr_dump_age(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  return mcrouter_count(v, n, e, o.max_dumped_config_age_s);
}
bool mcr_stats_root(cli_options& o, std::string_view v, const std::string&, std::string*) {
  o.stats_root = std::string(v);
  return true;
}
bool mcr_stats_interval(cli_options& o, std::string_view v, const std::string& n, std::string* e) {
  return mcrouter_count(v, n, e, o.stats_logging_interval_ms);
}

// ithaca's upgrade in place, which mcrouter's command line has no word
// for: SIGUSR2 starts the same command line with --takeover added.
bool mcr_takeover(cli_options& o, std::string_view, const std::string&, std::string*) {
  o.takeover = true;
  return true;
}
bool mcr_takeover_socket(cli_options& o, std::string_view v, const std::string&, std::string*) {
  o.takeover_socket = std::string(v);
  return true;
}

const mcrouter_option kMcrouterOptions[] = {
    {0, "config", false, mcr_config},
    {'f', "config-file", false, mcr_config_file},
    {0, "config-str", false, mcr_config_str},
    {'p', "port", false, mcr_port},
    {0, "listen-addresses", false, mcr_listen_addresses},
    {0, "listen-sock-fd", false, mcr_listen_fd},
    {'L', "log-path", false, mcr_log_path},
    {'R', "route-prefix", false, on_route_prefix},
    {0, "send-invalid-route-to-default", true, on_send_invalid_route},
    {0, "config-params", false, on_config_params},
    {0, "additional-config-params", false, on_config_params},
    {'t', "server-timeout", false, mcr_server_timeout},
    {0, "timeouts-until-tko", false, mcr_timeouts_until_tko},
    {'r', "probe-timeout-initial", false, mcr_probe_initial},
    {0, "target-max-shadow-requests", false, mcr_max_shadow},
    {0, "runtime-vars-file", false, mcr_runtime_vars},
    {0, "pool-stats-config-file", false, mcr_pool_stats},
    {0, "retry-timeout", false, mcr_probe_initial},
    {0, "num-proxies", false, mcr_threads},
    {0, "proxy-threads", false, mcr_threads},
    {0, "enable-flush-cmd", true, mcr_flush},
    {0, "allow-only-gets", true, mcr_only_gets},
    {0, "disable-reload-configs", true, on_disable_reload_configs},
    {0, "pem-cert-path", false, on_pem_cert},
    {0, "pem-key-path", false, on_pem_key},
    {0, "pem-ca-path", false, on_pem_ca},
    {0, "big-value-split-threshold", false, on_big_value_threshold},
    {0, "big-value-batch-size", false, on_big_value_batch},
    {0, "big-value-hide-reply-flag", true, on_big_value_hide},
    {0, "enable-logging-route", true, on_enable_logging_route},
    {0, "validate-config", true, mcr_validate},
    {0, "config-dump-root", false, mcr_dump_root},
    {0, "max-dumped-config-age", false, mcr_dump_age},
    {'a', "async-dir", false, mcr_async_dir},
    {0, "use-asynclog-version2", true, mcr_asynclog_v2},
    {0, "asynclog-disable", true, mcr_asynclog_disable},
    {0, "stats-root", false, mcr_stats_root},
    {0, "stats-logging-interval", false, mcr_stats_interval},
    {'v', "verbosity", false, mcr_verbosity},
    {'h', "help", true, mcr_help},
    {'V', "version", true, mcr_version},
    {0, "takeover", true, mcr_takeover},
    {0, "takeover-socket", false, mcr_takeover_socket},
};

const mcrouter_option* mcrouter_long(std::string_view name) {
  for (const mcrouter_option& o : kMcrouterOptions) {
    if (name == o.long_name) return &o;
  }
  return nullptr;
}
const mcrouter_option* mcrouter_short(char c) {
  for (const mcrouter_option& o : kMcrouterOptions) {
    if (o.short_name == c) return &o;
  }
  return nullptr;
}
template <std::size_t N>
bool listed(const std::string_view (&names)[N], std::string_view name) {
  for (std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

}  // namespace

// getopt_long's rules as mcrouter uses them; the first non-option word is
// its flavor (noted: ithaca has no flavors). [main thread]
bool parse_mcrouter_args(int argc, const char* const* argv, int first, cli_options& o, std::string* error) {
  o.mcrouter_mode = true;
  for (int i = first; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--") && arg.size() > 2) {
      const std::string_view body = arg.substr(2);
      const size_t eq = body.find('=');
      const std::string_view name = body.substr(0, eq);
      const std::string shown = "--" + std::string(name);
      const bool attached = eq != std::string_view::npos;
      std::string_view value = attached ? body.substr(eq + 1) : std::string_view();
      const mcrouter_option* spec = mcrouter_long(name);
      const bool inert_toggle = spec == nullptr && listed(kMcrouterInertToggles, name);
      const bool inert_value = spec == nullptr && listed(kMcrouterInertValues, name);
      const bool toggle = spec != nullptr ? spec->toggle : inert_toggle;
      if (!toggle && !attached && (spec != nullptr || inert_value)) {
        if (i + 1 >= argc) return fail(error, shown + ": missing value");
        value = argv[++i];
      }
      if (spec != nullptr) {
        if (!spec->handle(o, value, shown, error)) return false;
      } else if (inert_toggle || inert_value) {
        o.notes.push_back("mcrouter option " + shown + ": accepted, no effect in ithaca");
      } else {
        // Not one of mcrouter's public options (a build's own, such as
        // --rss-limit-mb): a word after it that is no option is its value.
        if (!attached && i + 1 < argc && argv[i + 1][0] != '-') ++i;
        o.notes.push_back("Unrecognized option: " + std::string(arg));
      }
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      o.notes.push_back("mcrouter flavor '" + std::string(arg) + "': ignored (ithaca has no flavors)");
      continue;
    }
    for (size_t j = 1; j < arg.size(); ++j) {
      const std::string shown = std::string("-") + arg[j];
      const mcrouter_option* spec = mcrouter_short(arg[j]);
      if (spec == nullptr) {
        o.notes.push_back("Unrecognized option: " + shown);
        continue;
      }
      std::string_view value;
      if (!spec->toggle) {
        value = arg.substr(j + 1);
        if (value.empty()) {
          if (i + 1 >= argc) return fail(error, shown + ": missing value");
          value = argv[++i];
        }
        j = arg.size();
      }
      if (!spec->handle(o, value, shown, error)) return false;
    }
  }
  return true;
}

}  // namespace ithaca::config
