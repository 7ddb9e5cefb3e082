#include "load.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "config_file.h"
#include "load_listeners.h"
#include "load_router.h"
#include "mcrouter_reader.h"
#include "nutcracker_reader.h"
#include "yaml_section.h"

namespace ithaca::config {

namespace {

// ---------------------------------------------------------------- sections
// One function per section. To add one (routes, pools, replication): give
// `config` a member, write parse_NAME, and add it to kSections.

void parse_listen(section& s, config& c) {
  listen_config& l = c.listen;
  std::vector<std::string> tcp;
  std::vector<YAML::Mark> marks;
  if (s.string_list("tcp", tcp, &marks)) {
    std::vector<tcp_address> addresses;
    for (size_t i = 0; i < tcp.size(); ++i) {
      tcp_address a;
      std::string why;
      if (!parse_listen_address(tcp[i], kDefaultPort, a, &why)) {
        s.fail_value("tcp", marks[i], why);
        return;
      }
      addresses.push_back(a);
    }
    l.tcp = std::move(addresses);
  }
  s.string_list("unix", l.unix_paths);
  std::string mode;
  s.string("unix_mode", mode);
  if (const YAML::Mark* m = s.context().mark_of("listen.unix_mode");
      m != nullptr && !parse_octal_mode(mode, l.unix_mode)) {
    s.fail_value("unix_mode", *m, "expected an octal mode from 0 to 777 (such as 0700), got '" + mode + "'");
  }
  s.integer("udp", l.udp_port, kPortRange);
  s.integer("backlog", l.backlog, kBacklogRange);
}

void parse_server(section& s, config& c) {
  server_config& v = c.server;
  s.integer("workers", v.workers, kWorkersRange);
  s.choice("io_backend", v.backend,
           {{"auto", io_backend::Auto}, {"io_uring", io_backend::IoUring}, {"epoll", io_backend::Epoll}});
  s.integer("max_connections", v.max_connections, kMaxConnectionsRange);
  s.duration("idle_timeout", v.idle_timeout_ms, kIdleTimeoutRange);
  s.boolean("enable_shutdown", v.enable_shutdown);
  s.boolean("enable_watch", v.enable_watch);
  s.boolean("enable_dumping", v.enable_dumping);
  s.boolean("enable_flush_all", v.enable_flush_all);
  std::string delimiter;
  s.string("prefix_delimiter", delimiter);
  if (const YAML::Mark* m = s.key_mark("prefix_delimiter"); m != nullptr) {
    if (delimiter.size() != 1) {
      s.fail_value("prefix_delimiter", *m, "expected one character (memcached -D), got '" + delimiter + "'");
    } else {
      v.prefix_delimiter = delimiter.front();
    }
  }
  s.boolean("detail_enabled", v.detail_enabled);
  s.integer("reqs_per_event", v.reqs_per_event, kReqsPerEventRange);
  s.choice("binding_protocol", v.binding);
  s.string("auth_file", v.auth_file);
  s.boolean("sasl", v.sasl);
  s.string("sasl_pwdb", v.sasl_pwdb);
  s.size("stack_size", v.stack_size, kStackSizeRange);
  s.size("read_buffer_size", v.read_buffer_size, kReadBufferRange);
  s.boolean("reload_on_change", v.reload_on_change);
}

void parse_cache(section& s, config& c) {
  cache_config& v = c.cache;
  s.size("memory_limit", v.memory_limit, kMemoryLimitRange);
  s.size("item_size_max", v.item_size_max, kItemSizeMaxRange);
  s.size("large_value_threshold", v.large_value_threshold, kLargeValueThresholdRange);
  s.size("large_value_disk_limit", v.large_value_disk_limit, kLargeValueDiskLimitRange);
  s.string("large_value_dir", v.large_value_dir);
  s.string("memory_file", v.memory_file);
  s.integer("hash_power", v.hash_power, kHashPowerRange);
  s.duration("gc_interval", v.gc_interval_ms, kGcIntervalRange);
  s.duration("lease_interval", v.lease_interval_ms, kLeaseIntervalRange);
  s.integer("slab_min_size", v.slab_min_size, kSlabMinSizeRange);
  s.boolean("lru_crawler", v.lru_crawler);
  s.boolean("hash_expand", v.hash_expand);
  s.boolean("evictions", v.evictions);
  s.boolean("cas_enabled", v.cas_enabled);
  s.choice("eviction", v.eviction, {{"s3fifo", cache_eviction::S3fifo}, {"clock", cache_eviction::Clock}});
  std::string factor;
  s.string("slab_growth_factor", factor);
  if (!factor.empty()) {
    char* end = nullptr;
    const double f = std::strtod(factor.c_str(), &end);
    if (*end != '\0' || !(f > 1.0) || f > kSlabGrowthFactorMax) {
      s.fail_value("slab_growth_factor", *s.key_mark("slab_growth_factor"),
                   "expected a number greater than 1 and at most 100 (memcached -f), got '" + factor + "'");
    } else {
      v.slab_growth_factor = f;
    }
  }
}

void parse_logging(section& s, config& c) {
  logging_config& v = c.logging;
  s.choice("level", v.level,
           {{"trace", log_level::Trace},
            {"debug", log_level::Debug},
            {"info", log_level::Info},
            {"warn", log_level::Warn},
            {"error", log_level::Error},
            {"off", log_level::Off}});
  s.string("file", v.file);
  s.integer("async_queue", v.async_queue, kAsyncQueueRange);
}

void parse_replication(section& s, config& c) {
  replication_config& v = c.replication;
  s.choice("role", v.role,
           {{"none", replication_role::None},
            {"master", replication_role::Master},
            {"slave", replication_role::Slave},
            {"auto", replication_role::Auto}});
  s.string("listen", v.listen_host);
  std::vector<std::string> allow;
  std::vector<YAML::Mark> allow_marks;
  if (s.string_list("allow", allow, &allow_marks)) {
    if (allow.empty()) {
      s.fail_value("allow", *s.context().mark_of("replication.allow"),
                   "an empty list; leave allow out to accept any peer, or name the slaves' addresses");
    }
    v.allow.clear();
    for (size_t i = 0; i < allow.size(); ++i) {
      cidr block;
      std::string why;
      if (!parse_cidr(allow[i], block, &why)) {
        s.fail_value("allow", allow_marks[i], why);
        break;
      }
      v.allow.push_back(block);
    }
  }
  s.integer("port", v.port, kPortRange);
  s.string("master", v.master);
  s.duration("slave_timeout", v.slave_timeout_ms, kSlaveTimeoutRange);
  s.duration("heartbeat_interval", v.heartbeat_interval_ms, kHeartbeatIntervalRange);
  s.duration("master_timeout", v.master_timeout_ms, kMasterTimeoutRange);
  s.size("send_buffer", v.send_buffer, kSendBufferRange);
  s.choice("ack", v.ack, {{"none", replication_ack::None}, {"slave", replication_ack::Slave}});
  s.duration("ack_timeout", v.ack_timeout_ms, kAckTimeoutRange);
  s.size("queue_size", v.queue_size, kReplicationQueueRange);
  s.boolean("serve_reads", v.serve_reads);
  s.string("virtual_ip", v.virtual_ip);
  s.duration("check_interval", v.check_interval_ms, kCheckIntervalRange);
  s.duration("failover_delay", v.failover_delay_ms, kFailoverDelayRange);
  if (const YAML::Node* tls = s.mapping("tls")) {
    section t(s.context(), "replication.tls", *tls);
    v.tls.enabled = true;
    t.boolean("enabled", v.tls.enabled);
    parse_tls_keys(t, "replication.tls", v.tls);
    t.finish();
  }
  // With a virtual IP and no role, the address decides it.
  if (!v.virtual_ip.empty() && s.context().mark_of("replication.role") == nullptr) v.role = replication_role::Auto;
}

void parse_metrics(section& s, config& c) {
  metrics_config& m = c.metrics;
  std::string text;
  s.string("listen", text);
  const YAML::Mark* mark = s.context().mark_of("metrics.listen");
  if (mark == nullptr) return;
  if (text.empty()) {  // spelled out: off
    m.enabled = false;
    return;
  }
  std::string why;
  if (!parse_tcp_address(text, kDefaultMetricsPort, m.listen, &why)) {
    s.fail_value("listen", *mark, why);
    return;
  }
  m.enabled = true;
}

// `tls:` (tls_config.h): memcached's -Z and -o ssl_* under their own names.
void parse_tls(section& s, config& c) {
  tls_config& t = c.tls;
  s.boolean("enabled", t.enabled);
  s.string("chain_cert", t.chain_cert);
  s.string("key", t.key);
  s.string("ca_cert", t.ca_cert);
  s.integer("verify_mode", t.verify_mode, range{0, kVerifyModeMax});
  std::string version;
  s.string("min_version", version);
  if (const YAML::Mark* m = s.context().mark_of("tls.min_version");
      m != nullptr && !parse_min_version(version, t.min_version)) {
    s.fail_value("min_version", *m,
                 "expected tlsv1.0, tlsv1.1, tlsv1.2 or tlsv1.3 (or memcached's 0 to 3), got '" + version + "'");
  }
  s.string("ciphers", t.ciphers);
  std::string format;
  s.string("keyformat", format);
  if (const YAML::Mark* m = s.context().mark_of("tls.keyformat"); m != nullptr) {
    if (format == "pem" || format == "PEM" || format == "1") {
      t.keyformat = kKeyformatPem;
    } else if (format == "der" || format == "DER" || format == "2") {
      t.keyformat = kKeyformatAsn1;
    } else {
      s.fail_value("keyformat", *m, "expected pem or der, got '" + format + "'");
    }
  }
  s.size("wbuf_size", t.wbuf_size, range{1024, 1024 * 1024});
  s.boolean("session_cache", t.session_cache);
  s.boolean("kernel_tls", t.kernel_tls);
}

void parse_router(section& s, config& c) {
  s.string("spool_dir", c.router.spool_dir);
  s.size("spool_max_size", c.router.spool_max_size, kSpoolMaxSizeRange);
  s.size("max_value_size", c.router.max_value_size, kMaxValueSizeRange);
  s.boolean("spool_fsync", c.router.spool_fsync);
  s.string("default_route", c.router.default_route);
  s.boolean("send_invalid_route_to_default", c.router.send_invalid_route_to_default);
  if (const YAML::Node* tls = s.mapping("tls")) {
    section t(s.context(), "router.tls", *tls);
    parse_tls_keys(t, "router.tls", c.router.tls);
    t.finish();
  }
}

// `process:` memcached's -u -P -r -k -L (-d is a flag only).
void parse_process(section& s, config& c) {
  process_config& p = c.process;
  s.string("pid_file", p.pid_file);
  s.string("user", p.user);
  s.boolean("core_dumps", p.core_dumps);
  s.boolean("lock_memory", p.lock_memory);
  s.boolean("large_pages", p.large_pages);
}

// `takeover:` the socket a new process takes this one's place through.
void parse_takeover(section& s, config& c) {
  s.string("socket", c.takeover.socket);
  c.takeover.socket_set = s.context().mark_of("takeover.socket") != nullptr;
  s.duration("timeout", c.takeover.timeout_ms, range{100, 3600 * 1000});
}

struct section_entry {
  const char* name;
  void (*parse)(section&, config&);
};

constexpr section_entry kSections[] = {
    {"listen", parse_listen},     {"server", parse_server},           {"cache", parse_cache},
    {"logging", parse_logging},   {"replication", parse_replication}, {"metrics", parse_metrics},
    {"tls", parse_tls},           {"router", parse_router},           {"process", parse_process},
    {"takeover", parse_takeover},
};

// ---------------------------------------------------------------- document

void parse_document(const YAML::Node& root, load_context& ctx, config& c) {
  if (root.IsNull()) return;  // an empty file: the defaults
  if (!root.IsMap()) {
    ctx.fail(root.Mark(),
             "expected a mapping of sections (listen, server, cache, logging, replication, metrics, tls, router, "
             "process, takeover, pools, routes, route, listeners), got " +
                 describe_node(root));
    return;
  }
  section top(ctx, "", root);
  for (const section_entry& entry : kSections) {
    const YAML::Node* node = top.mapping(entry.name);
    if (node == nullptr) continue;
    section s(ctx, entry.name, *node);
    entry.parse(s, c);
    s.finish();
  }
  if (const YAML::Node* pools = top.mapping("pools")) parse_pools(*pools, ctx, c.router);
  if (const YAML::Node* routes = top.mapping("routes")) parse_named_routes(*routes, ctx, c.router);
  // `route:` with nothing under it is no route, as an empty section is none.
  if (const YAML::Node* route = top.any("route"); route != nullptr && !route->IsNull()) {
    parse_route(*route, ctx, c.router);
  }
  if (const YAML::Node* listeners = top.sequence("listeners")) parse_listeners(*listeners, ctx, c.router);
  if (!ctx.failed()) check_router(root, ctx, c.router);  // on a whole tree only
  top.finish();
}

// ithaca's YAML (or the YAML syntax error, as file:line: message).
void read_yaml(const std::string& text, load_context& ctx, config& c, bool allow_empty) {
  try {
    const YAML::Node root = YAML::Load(text);
    if (root.IsNull() && !allow_empty) {
      ctx.fail(
          "the file is empty (no settings, only whitespace or comments); refusing to reset "
          "every setting to its default");
    } else {
      if (!read_nutcracker(root, ctx, c)) parse_document(root, ctx, c);
    }
  } catch (const YAML::Exception& e) {
    // Syntax errors: yaml-cpp's message without its own "yaml-cpp: error at
    // line L, column C: " prefix, which we replace with ours.
    if (e.mark.is_null()) {
      ctx.fail(e.msg);
    } else {
      ctx.fail(e.mark, e.msg);
    }
  }
}

}  // namespace

bool load_config_text(const std::string& text, const std::string& name, config& out, std::string* error,
                      bool allow_empty) {
  load_context ctx(name);
  config c;
  // What the caller knows of the command line before the file (make_config):
  // an mcrouter config's preprocessor reads it (mcrouter_jsonm.h).
  c.server.workers = out.server.workers;
  c.router.default_route = out.router.default_route;
  c.router.config_params = out.router.config_params;
  c.router.mcrouter_server_timeout_ms = out.router.mcrouter_server_timeout_ms;
  c.router.mcrouter_asynclog_disable = out.router.mcrouter_asynclog_disable;
  // The format is told by the text (or a .json name): an mcrouter config,
  // else ithaca's YAML.
  c.source.text = text;
  if (looks_like_mcrouter_json(text, name)) {
    c.server.reload_on_change = true;  // mcrouter watches its config file (config.h)
    c.source.mcrouter = true;
    read_mcrouter_config(text, ctx, c);
  } else {
    read_yaml(text, ctx, c, allow_empty);
  }
  if (!ctx.failed()) resolve_pool_tls(c.router);
  if (!ctx.failed() && ctx.mark_of("cache.large_value_threshold") == nullptr) {
    // The default threshold follows a lowered item_size_max; one set in the
    // file is checked by validate() instead.
    c.cache.large_value_threshold = std::min(c.cache.large_value_threshold, c.cache.item_size_max);
  }
  if (!ctx.failed()) {
    validation_error v;
    if (!validate(c, &v)) {
      const YAML::Mark* mark = nullptr;
      for (const std::string& key : v.keys) {
        if ((mark = ctx.mark_of(key)) != nullptr) break;
      }
      // Not set in the file (a default broke a rule): point at the section.
      for (const std::string& key : v.keys) {
        if (mark == nullptr) mark = ctx.mark_of(key.substr(0, key.find('.')));
      }
      if (mark != nullptr) {
        ctx.fail(*mark, v.message);
      } else {
        ctx.fail(v.message);
      }
    }
  }
  if (ctx.failed()) {
    if (error) *error = ctx.error();
    return false;
  }
  c.sources = std::move(ctx.sources());
  out = std::move(c);
  return true;
}

bool load_config(const std::string& path, config& out, std::string* error, bool allow_empty,
                 const std::string* text_instead) {
  std::string text;
  if (text_instead != nullptr) {
    text = *text_instead;
  } else if (!read_config_file(path, text, error)) {
    return false;
  }
  if (!load_config_text(text, path, out, error, allow_empty)) return false;
  // The file itself first, then what it imported (an import of itself stays
  // once); made absolute now, as the paths were meant from this directory
  // (-d changes it to / before the config watch starts).
  std::erase(out.sources, path);
  out.sources.insert(out.sources.begin(), path);
  for (std::string& source : out.sources) {
    std::error_code ec;
    std::filesystem::path whole = std::filesystem::absolute(source, ec);
    if (!ec) source = whole.lexically_normal().string();
  }
  return true;
}

}  // namespace ithaca::config
