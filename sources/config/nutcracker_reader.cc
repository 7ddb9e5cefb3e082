#include "nutcracker_reader.h"

#include <algorithm>
#include <optional>

#include "load_listeners.h"
#include "route_kind_info.h"
#include "server_list.h"

namespace ithaca::config {

namespace {

// ithaca's own top-level sections: a file with one of them is ithaca's YAML.
constexpr const char* kIthacaSections[] = {"listen", "server", "cache",  "logging",  "replication",
                                           "pools",  "route",  "routes", "listeners"};

// twemproxy's defaults (README "Configuration"; see the header).
constexpr unsigned kNutcrackerBacklog = 512;
constexpr uint64_t kNutcrackerRetryMs = 30000;
constexpr unsigned kNutcrackerFailureLimit = 2;

constexpr range kNutcrackerTimeoutRange{1, 3600 * 1000};
constexpr range kNutcrackerConnectionsRange{1, 64};
constexpr range kNutcrackerFailureLimitRange{1, 1000};
constexpr range kClientsRange{0, 1u << 20};

// `listen:` "host:port", "name:port", or "/path" with an optional octal mode.
bool parse_listen(const std::string& text, std::string& address, std::optional<unsigned>& mode, std::string* error) {
  if (!text.starts_with("/")) return parse_listener_address(text, address, error);
  const size_t space = text.find_first_of(" \t");
  address = "unix:" + text.substr(0, space);
  if (space == std::string::npos) return true;
  std::string m = text.substr(space);
  m.erase(0, m.find_first_not_of(" \t"));
  unsigned bits = 0;
  if (!parse_octal_mode(m, bits)) {
    if (error) *error = "expected '/path' or '/path MODE' (MODE in octal, like 0666), got '" + text + "'";
    return false;
  }
  mode = bits;
  return true;
}

// Refuses `key` when set (to anything but false, for the booleans): what
// ithaca does not do is said, never ignored.
void refuse(section& s, const YAML::Node& node, const char* key, const std::string& why) {
  const YAML::Node v = node[key];
  if (!v) return;
  bool on = false;
  if (std::string_view(key) == "redis" || std::string_view(key) == "tcpkeepalive") {
    s.boolean(key, on);  // marks it known, checks it is a boolean
    if (!on) return;
  } else {
    std::string ignored;
    s.string(key, ignored);
  }
  s.context().fail(v.Mark(), std::string(key) + ": " + why);
}

struct pool_read {
  pool_config pool;
  listener_route listener;
  std::optional<unsigned> unix_mode;
  YAML::Mark listen_mark;
};

pool_read read_pool(load_context& ctx, const std::string& name, const YAML::Node& node, const YAML::Mark& key_mark) {
  pool_read r;
  pool_config& p = r.pool;
  p.name = name;
  p.line = key_mark.line + 1;
  // twemproxy's defaults where they differ from ithaca's.
  p.hash = kinds::hash_kind::Fnv1a_64;
  p.dist = kinds::distribution_kind::Ketama;
  p.failure_limit = kNutcrackerFailureLimit;
  p.retry_interval_ms = p.retry_interval_max_ms = kNutcrackerRetryMs;
  r.listener.backlog = kNutcrackerBacklog;
  r.listener.line = p.line;
  section s(ctx, name, node);
  refuse(s, node, "redis", "redis pools are not supported (ithaca speaks the memcached protocols only)");
  refuse(s, node, "redis_auth", "redis pools are not supported (ithaca speaks the memcached protocols only)");
  refuse(s, node, "redis_db", "redis pools are not supported (ithaca speaks the memcached protocols only)");
  refuse(s, node, "tcpkeepalive", "true is not supported (ithaca finds a dead server by its failures and probes)");
  std::string listen;
  s.string("listen", listen);
  if (const YAML::Mark* m = ctx.mark_of(name + ".listen")) {
    r.listen_mark = *m;
    std::string why;
    if (!parse_listen(listen, r.listener.address, r.unix_mode, &why)) s.fail_value("listen", *m, why);
  } else {
    ctx.fail(node.Mark(), "pool '" + name + "' needs `listen:` (host:port or /path)");
  }
  // twemproxy's server line: "host:port:weight [name]", or "/path:weight [name]".
  if (!read_server_list(s, node, p, server_syntax::Twemproxy) && !ctx.mark_of(name + ".servers")) {
    ctx.fail(node.Mark(), "pool '" + name + "' needs `servers:` (a list of host:port:weight)");
  }
  s.choice("hash", p.hash);
  s.string("hash_tag", p.hash_tag);
  // twemproxy's three.
  s.choice("distribution", p.dist,
           {kinds::distribution_kind::Ketama, kinds::distribution_kind::Modula, kinds::distribution_kind::Random});
  // twemproxy's timeouts are plain milliseconds ("timeout: 400"); its one
  // timeout covers the connect and the reply.
  s.integer("timeout", p.timeout_ms, kNutcrackerTimeoutRange);
  p.connect_timeout_ms = p.timeout_ms;
  s.integer("backlog", r.listener.backlog, kBacklogRange);
  s.integer("client_connections", r.listener.max_clients, kClientsRange);
  s.boolean("preconnect", p.preconnect);
  s.integer("server_connections", p.connections, kNutcrackerConnectionsRange);
  s.boolean("auto_eject_hosts", p.auto_eject_hosts);
  s.integer("server_retry_timeout", p.retry_interval_ms, kNutcrackerTimeoutRange);
  p.retry_interval_max_ms = p.retry_interval_ms;
  s.integer("server_failure_limit", p.failure_limit, kNutcrackerFailureLimitRange);
  if (!p.hash_tag.empty() && p.hash_tag.size() != 2) {
    s.fail_value("hash_tag", *ctx.mark_of(name + ".hash_tag"),
                 "must be two characters, like \"{}\", got \"" + p.hash_tag + "\"");
  }
  s.finish();
  r.listener.route = module_node("pool", route_format::Yaml, p.line, {{"pool", name}});
  return r;
}

}  // namespace

bool is_nutcracker_document(const YAML::Node& root) {
  if (!root.IsMap()) return false;
  bool pool_like = false;
  for (const auto kv : root) {
    if (!kv.first.IsScalar()) return false;
    const std::string& key = kv.first.Scalar();
    for (const char* section_name : kIthacaSections) {
      if (key == section_name) return false;
    }
    if (kv.second.IsMap() && kv.second["listen"] && kv.second["servers"]) pool_like = true;
  }
  return pool_like;
}

bool read_nutcracker(const YAML::Node& root, load_context& ctx, config& out) {
  if (!is_nutcracker_document(root)) return false;
  out.listen.tcp.clear();
  out.listen.unix_paths.clear();
  out.router.format = "nutcracker";
  std::optional<unsigned> unix_mode;
  std::vector<std::pair<std::string, int>> seen;   // listen address, line
  std::vector<std::pair<std::string, int>> names;  // pool name, line
  for (const auto kv : root) {
    const std::string name = kv.first.Scalar();
    auto twice = std::find_if(names.begin(), names.end(), [&](const auto& e) { return e.first == name; });
    if (twice != names.end()) {
      ctx.fail(kv.first.Mark(),
               "pool '" + name + "' is defined twice (first on line " + std::to_string(twice->second) + ")");
      continue;
    }
    names.emplace_back(name, kv.first.Mark().line + 1);
    if (!kv.second.IsMap()) {
      ctx.fail(kv.second.Mark(),
               "pool '" + name + "' is a mapping with `listen:` and `servers:`, got " + describe_node(kv.second));
      continue;
    }
    pool_read r = read_pool(ctx, name, kv.second, kv.first.Mark());
    if (r.unix_mode) {
      if (unix_mode && *unix_mode != *r.unix_mode) {
        ctx.fail(r.listen_mark, "listen: every unix socket of a file has one mode here; pool '" + name +
                                    "' asks for another than an earlier pool");
      }
      unix_mode = r.unix_mode;
    }
    const std::string& address = r.listener.address;
    if (!address.empty() && !address.ends_with(":0")) {
      auto same = std::find_if(seen.begin(), seen.end(), [&](const auto& e) { return e.first == address; });
      if (same != seen.end()) {
        ctx.fail(r.listen_mark, "listen: pool '" + name + "' listens on " + address + ", as the pool on line " +
                                    std::to_string(same->second) + " does");
      }
      seen.emplace_back(address, r.listener.line);
    }
    out.router.pools.push_back(std::move(r.pool));
    out.router.listeners.push_back(std::move(r.listener));
  }
  if (unix_mode) out.listen.unix_mode = *unix_mode;
  return true;
}

}  // namespace ithaca::config
