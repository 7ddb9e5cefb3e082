#include "load_router.h"

#include <algorithm>

#include "load_route_tree.h"
#include "route_check.h"
#include "server_list.h"
#include "tls_config.h"

namespace ithaca::config {

namespace {

constexpr range kConnectionsRange{1, 64};
constexpr range kInflightRange{1, 1u << 16};
constexpr range kQueuedRange{0, 1u << 20};
constexpr range kFailureLimitRange{1, 1000};
constexpr range kTimeoutRange{1, 3600 * 1000};

// A pool's `tls:`: true / false, or a map of its own keys (TLS on).
void parse_pool_tls(section& s, pool_config& p) {
  const YAML::Node* node = s.any("tls");
  if (node == nullptr) return;
  const std::string where = "pools." + p.name + ".tls";
  if (node->IsMap()) {
    section t(s.context(), where, *node);
    p.tls_own.enabled = true;
    t.boolean("enabled", p.tls_own.enabled);
    parse_tls_keys(t, where, p.tls_own);
    t.finish();
    return;
  }
  const std::string text = node->IsScalar() ? node->Scalar() : "";
  if (text == "true" || text == "yes" || text == "on") {
    p.tls_own.enabled = true;
  } else if (text == "false" || text == "no" || text == "off") {
    p.tls_own.enabled = false;
  } else {
    s.fail_value("tls", node->Mark(),
                 "expected true, false or a mapping (ca_cert, verify, chain_cert, key, server_name, "
                 "min_version, ciphers), got " +
                     describe_node(*node));
  }
}

void parse_pool(section& s, const YAML::Node& node, pool_config& p) {
  if (!read_server_list(s, node, p, server_syntax::Ithaca)) {
    s.context().fail(node.Mark(), "pool '" + p.name + "' needs `servers:` (a list of host:port)");
  }
  s.choice("hash", p.hash);
  s.choice("distribution", p.dist);
  s.string("hash_tag", p.hash_tag);
  s.boolean("hash_stop", p.hash_stop);
  s.choice("protocol", p.protocol);
  s.duration("connect_timeout", p.connect_timeout_ms, kTimeoutRange);
  s.duration("timeout", p.timeout_ms, kTimeoutRange);
  s.duration("late_reply_timeout", p.late_reply_timeout_ms, kTimeoutRange);
  s.integer("connections", p.connections, kConnectionsRange);
  s.integer("max_inflight", p.max_inflight, kInflightRange);
  s.integer("max_queued", p.max_queued, kQueuedRange);
  s.integer("max_shadow_requests", p.max_shadow_requests, kQueuedRange);
  s.integer("failure_limit", p.failure_limit, kFailureLimitRange);
  s.duration("retry_interval", p.retry_interval_ms, kTimeoutRange);
  s.duration("retry_interval_max", p.retry_interval_max_ms, kTimeoutRange);
  s.boolean("auto_eject_hosts", p.auto_eject_hosts);
  s.boolean("allow_flush", p.allow_flush);
  s.boolean("keep_routing_prefix", p.keep_routing_prefix);
  parse_pool_tls(s, p);
  if (!p.hash_tag.empty() && p.hash_tag.size() != 2) {
    s.context().fail(node.Mark(), "pool '" + p.name + "': hash_tag must be two characters, like \"{}\"");
  }
  if (p.retry_interval_max_ms < p.retry_interval_ms) {
    s.context().fail(node.Mark(), "pool '" + p.name + "': retry_interval_max must not be below retry_interval");
  }
}

}  // namespace

void parse_tls_keys(section& s, const std::string& where, backend_tls& t) {
  s.string("ca_cert", t.ca_cert);
  bool verify = false;
  if (s.key_mark("verify") != nullptr) {
    verify = t.verify_peer();
    s.boolean("verify", verify);
    t.verify = verify ? tls_verify::On : tls_verify::Off;
  }
  s.string("chain_cert", t.chain_cert);
  s.string("key", t.key);
  s.string("server_name", t.server_name);
  std::string version;
  s.string("min_version", version);
  if (const YAML::Mark* m = s.key_mark("min_version"); m != nullptr) {
    unsigned v = 0;
    if (!parse_min_version(version, v)) {
      s.fail_value("min_version", *m, "expected tlsv1.0, tlsv1.1, tlsv1.2 or tlsv1.3, got '" + version + "'");
    } else {
      t.min_version = v + 1;
    }
  }
  s.string("ciphers", t.ciphers);
  if (!t.key.empty() && t.chain_cert.empty()) {
    if (const YAML::Mark* m = s.key_mark("key")) {
      s.fail_value("key", *m, where + ": key is given without chain_cert (the client certificate it belongs to)");
    }
  }
}

void parse_pools(const YAML::Node& node, load_context& ctx, router_config& out) {
  if (!node.IsMap()) {
    ctx.fail(node.Mark(), "`pools:` is a mapping of pool names to pools, got " + describe_node(node));
    return;
  }
  for (const auto& kv : node) {
    pool_config p;
    p.name = kv.first.Scalar();
    p.line = kv.first.Mark().line + 1;
    if (!kv.second.IsMap()) {
      ctx.fail(kv.second.Mark(), "pool '" + p.name + "' is a mapping with `servers:`, got " + describe_node(kv.second));
      continue;
    }
    section s(ctx, "pools." + p.name, kv.second);
    parse_pool(s, kv.second, p);
    s.finish();
    out.pools.push_back(std::move(p));
  }
}

void parse_named_routes(const YAML::Node& node, load_context& ctx, router_config& out) {
  if (!node.IsMap()) {
    ctx.fail(node.Mark(), "`routes:` is a mapping of route names to routes, got " + describe_node(node));
    return;
  }
  section names(ctx, "routes", node);  // refuses a name given twice
  for (const auto kv : node) {
    const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "";
    names.any(name);
    if (name.empty() || name == "local" || name.starts_with("pool:")) {
      ctx.fail(kv.first.Mark(), "routes: '" + name +
                                    "' cannot name a route (\"local\" and \"pool:NAME\" "
                                    "already mean the local store and a pool)");
      continue;
    }
    route_config r = read_route_node(kv.second, ctx);
    if (r.is_ref() && !r.name.empty()) {  // (no name: a node that failed to read, reported)
      ctx.fail(kv.second.Mark(), "routes: '" + name + "' is only another name for '" + r.name + "'; use '" + r.name +
                                     "' where '" + name + "' is used");
      continue;
    }
    r.name = name;
    out.named_routes.push_back(std::move(r));
  }
}

void parse_route(const YAML::Node& node, load_context& ctx, router_config& out) {
  out.route = read_route_node(node, ctx);
  out.has_route = true;
}

void check_router(const YAML::Node& root, load_context& ctx, const router_config& rc) {
  for (const route_problem& p : check_route_tree(rc)) {
    YAML::Mark m = root.Mark();
    m.line = p.line - 1;
    m.column = 0;
    ctx.fail(m, p.message);
  }
}

}  // namespace ithaca::config
