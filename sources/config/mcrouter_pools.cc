#include "mcrouter_pools.h"

#include <limits>
#include <algorithm>

#include "server_list.h"

namespace ithaca::config::mcrouter {

bool pools::have(const std::string& name) const {
  return std::any_of(out_.begin(), out_.end(), [&](const pool_config& q) { return q.name == name; });
}

// The pool `json` names ("A") or defines ({"name": "A", "servers": ...}).
const pools::pool_def* pools::find(const YAML::Node& json, const YAML::Node& at) {
  std::string name;
  YAML::Node body;
  if (json.IsScalar()) {
    name = json.Scalar();
    auto it = json_.find(name);
    if (it == json_.end()) {
      std::vector<std::string> names;
      for (const auto& p : json_) names.push_back(p.first);
      const std::string close = closest_key(name, names);
      err_.fail(at, "Can not read pool: " + name + " (it is not under `pools`" +
                        (close.empty() ? std::string(")") : "; did you mean '" + close + "'?)"));
      return nullptr;
    }
    body.reset(it->second);
  } else if (json.IsMap() && json["name"] && json["name"].IsScalar()) {
    name = json["name"].Scalar();
    if (json_.count(name) == 0) json_[name] = json;
    body.reset(json_[name]);
  } else {
    err_.fail(at, "Pool should be a string (name of pool) or an object with a string 'name'");
    return nullptr;
  }
  if (auto it = defs_.find(name); it != defs_.end()) return it->second.ok ? &it->second : nullptr;
  pool_def& d = defs_[name];
  d.base.name = prefix_ + name;
  d.base.line = err_.line(body);
  std::set<std::string> seen{name};
  d.ok = read(body, d, seen);
  return d.ok ? &d : nullptr;
}

// One mcrouter pool object into `d` (servers, timeouts, weights, mcrouter's
// defaults: ascii, hash stop, 1 s), refusing what ithaca cannot honour (another
// protocol). `inherit` merges the parent's keys
// and reads the result again; `seen` holds the chain, so a cycle is an error
// and the recursion is at most one level per pool of the file. [the config
// loading thread; no lock] False (with the error at its line) on the first
// fatal problem.
bool pools::read(const YAML::Node& json, pool_def& d, std::set<std::string>& seen) {
  const std::string what = "pool '" + d.base.name + "'";
  if (!json.IsMap()) {
    err_.fail(json, what + " is not an object");
    return false;
  }
  err_.allow(json, what,
             {"servers", "protocol", "server_timeout", "connect_timeout", "weights", "inherit", "region", "cluster",
              "keep_routing_prefix", "hostnames", "failure_domains", "security_mech", "use_ssl", "error_on_empty",
              "port_override",
              // mcrouter's source reads no pool_locality (its test_shadow.json
              // writes one): a label, taken and ignored as mcrouter does.
              "pool_locality"});
  if (const YAML::Node inherit = json["inherit"]) {  // the parent's keys where this pool has none
    const std::string parent = inherit.Scalar();
    if (seen.count(parent) != 0) {
      err_.fail(inherit, "Cycle in pool inheritance");
      return false;
    }
    auto it = json_.find(parent);
    if (it == json_.end()) {
      err_.fail(inherit, "Can not read pool: " + parent);
      return false;
    }
    seen.insert(parent);
    YAML::Node merged(YAML::NodeType::Map);
    for (const auto kv : json) {
      if (kv.first.Scalar() != "inherit") merged[kv.first.Scalar()] = kv.second;
    }
    for (const auto kv : it->second) {
      if (!merged[kv.first.Scalar()]) merged[kv.first.Scalar()] = kv.second;
    }
    err_.at(json);
    return read(merged, d, seen);
  }
  pool_config& p = d.base;
  p.protocol = kinds::backend_protocol::Ascii;  // mcrouter speaks ascii unless told
  p.hash_stop = true;                           // mcrouter hashes a key up to "|#|"
  p.hash = kinds::hash_kind::Md5;               // unused by ch3 and crc32
  p.timeout_ms = default_timeout_ms_;           // mcrouter's -t (default 1000 ms)
  p.shared_servers = true;                      // one destination per address and settings
  if (const YAML::Node proto = json["protocol"]; proto && proto.Scalar() != "ascii") {
    err_.fail(proto, what + ": protocol '" + proto.Scalar() + "' is not supported by ithaca (ascii)");
  }
  // mcrouter's TLS to the servers: `use_ssl: true` or `security_mech: "tls"`.
  // The certificates are mcrouter's --pem-* flags, router.tls in ithaca
  // (backend_tls.h); with a CA the server's certificate is verified.
  if (const YAML::Node s = json["use_ssl"]) {
    bool on = false;
    if (!as_bool(s, on)) {
      err_.fail(s, what + ": use_ssl must be true or false");
    } else {
      p.tls_own.enabled = on;
    }
  }
  if (const YAML::Node s = json["security_mech"]) {
    if (s.Scalar() == "tls") {
      p.tls_own.enabled = true;
    } else if (s.Scalar() != "plain") {
      err_.fail(s, what + ": security_mech '" + s.Scalar() + "' is not supported by ithaca (plain or tls)");
    }
  }
  if (const YAML::Node k = json["keep_routing_prefix"]) {
    if (!as_bool(k, p.keep_routing_prefix)) err_.fail(k, what + ": keep_routing_prefix is true or false");
  }
  uint64_t timeout = p.timeout_ms;
  if (const YAML::Node t = json["server_timeout"]) timeout = timeout_of(t, what + ": server_timeout");
  p.timeout_ms = timeout;
  p.connect_timeout_ms = timeout;
  if (const YAML::Node t = json["connect_timeout"]) p.connect_timeout_ms = timeout_of(t, what + ": connect_timeout");
  const YAML::Node servers = json["servers"];
  if (!servers) {
    err_.fail(json, what + ": servers not found");
    return false;
  }
  if (!servers.IsSequence()) {
    err_.fail(servers, what + ": servers is not an array");
    return false;
  }
  if (const YAML::Node e = json["error_on_empty"]; e && !as_bool(e, d.error_on_empty)) {
    err_.fail(e, what + ": error_on_empty is not a boolean");
  }
  // mcrouter's port_override: every server of the pool on this port (its
  // servers may then name none, "localhost").
  int64_t port_override = 0;
  if (const YAML::Node po = json["port_override"]) {
    if (!as_int(po, port_override) || port_override < 1 || port_override > 65535) {
      err_.fail(po, what + ": port_override is a port from 1 to 65535");
      return false;
    }
  }
  // No server is taken (pool_route makes its PoolRoute an error route); a
  // server listed twice too: both places go to one server, as mcrouter's
  // one destination per address and settings (server_directory shares it).
  // An object is a route (mcrouter's makePool hands it to the route
  // factory): the provider reads it where the pool is used.
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const YAML::Node& s = servers[i];
    if (s.IsMap()) {
      d.entries.push_back(entry{-1, s});
      continue;
    }
    if (!is_string(s)) {
      err_.fail(s, what + ": server #" + std::to_string(i) + " is not a string/object");
      return false;
    }
    backend_server b;
    if (!server(s, b, what, static_cast<uint16_t>(port_override))) return false;
    d.entries.push_back(entry{static_cast<int>(p.servers.size()), {}});
    p.servers.push_back(std::move(b));
  }
  if (const YAML::Node fd = json["failure_domains"]) {
    // mcrouter also takes a name, which it hashes with its ConfigApi's
    // function: ithaca takes numbers only.
    if (!fd.IsSequence() || fd.size() != servers.size()) {
      err_.fail(fd, what + ": failure_domains expected to be of the same size as servers, expected " +
                        std::to_string(servers.size()) + ", got " + std::to_string(fd.IsSequence() ? fd.size() : 0));
      return false;
    }
    for (size_t i = 0; i < fd.size(); ++i) {
      int64_t n = 0;
      if (!as_int(fd[i], n) || n < 0 || n > std::numeric_limits<uint32_t>::max()) {
        err_.fail(fd[i], what + ": a failure domain is a whole number (names are not supported by ithaca)");
        return false;
      }
      // A route object's place has no destination to give it to.
      if (d.entries[i].server >= 0) {
        p.servers[static_cast<std::size_t>(d.entries[i].server)].failure_domain = static_cast<uint32_t>(n);
      }
    }
  }
  if (const YAML::Node w = json["weights"]) {
    // mcrouter ignores weights whose count differs from the servers'
    // (and then warns); ithaca refuses them.
    if (!w.IsSequence() || w.size() != servers.size()) {
      err_.fail(w, what + ": weights must be a list of one number per server");
      return false;
    }
    for (const YAML::Node& x : w) {
      double f = 0;
      if (!as_number(x, f) || f < 0 || f > 1) {
        err_.fail(x, what + ": a weight is a number from 0 to 1");
        return false;
      }
      d.weights.push_back(f);
    }
  }
  return true;
}

uint64_t pools::timeout_of(const YAML::Node& t, const std::string& what) {
  int64_t ms = 0;
  if (!as_int(t, ms) || ms < 1 || ms > 3600 * 1000) {
    err_.fail(t, what + " is not a number of milliseconds from 1 to 3600000");
    return 1000;
  }
  return static_cast<uint64_t>(ms);
}

// `text` ("host", "host:port", "[v6]:port", "host:port:ascii:...") on
// `port` instead of its own, as mcrouter's AccessPoint takes port_override.
namespace {
std::string with_port(const std::string& text, uint16_t port) {
  const size_t close = text.find(']');
  const size_t host_end = text.find(':', close == std::string::npos ? 0 : close);
  const size_t rest = host_end == std::string::npos ? std::string::npos : text.find(':', host_end + 1);
  std::string out(text, 0, host_end);
  out += ':';
  out += std::to_string(port);
  if (rest != std::string::npos) out.append(text, rest, std::string::npos);
  return out;
}
}  // namespace

// "host:port", "[v6]:port", "host:port:ascii", "host:port:ascii:plain".
bool pools::server(const YAML::Node& s, backend_server& b, const std::string& what, uint16_t port) {
  std::string text = s.Scalar();
  if (port != 0) text = with_port(text, port);
  const size_t close = text.find(']');
  const size_t port_colon = text.find(':', close == std::string::npos ? 0 : close);
  size_t extra = port_colon == std::string::npos ? std::string::npos : text.find(':', port_colon + 1);
  if (close == std::string::npos && port_colon != std::string::npos && text.find(':') != port_colon) {
    extra = std::string::npos;  // a bare IPv6 address; parse_backend_server says what is wrong
  }
  if (extra != std::string::npos) {
    const std::string rest = text.substr(extra + 1);
    text = text.substr(0, extra);
    const size_t colon = rest.find(':');
    const std::string protocol = rest.substr(0, colon);
    const std::string security = colon == std::string::npos ? "plain" : rest.substr(colon + 1);
    if (protocol != "ascii" || (security != "plain" && !security.starts_with("plain:"))) {
      err_.fail(s, what + ": server '" + s.Scalar() + "': only ascii without TLS is supported by ithaca");
      return false;
    }
  }
  std::string why;
  if (!parse_backend_server(text, b, &why, server_syntax::Mcrouter)) {
    err_.fail(s, what + ": " + why);
    return false;
  }
  if (!b.name.empty()) {
    err_.fail(s, what + ": bad server '" + s.Scalar() + "'");
    return false;
  }
  b.line = err_.line(s);
  return true;
}

// A pool placed by `dist` (with the weights when WeightedCh3): the pool
// itself the first time, a copy named "NAME~dist" when another PoolRoute
// places the same pool differently.
std::string pools::placed(const pool_def& d, kinds::distribution_kind dist, const std::vector<double>& weights,
                          uint32_t buckets) {
  pool_config p = d.base;
  p.dist = dist;
  p.buckets = buckets;
  if (dist == kinds::distribution_kind::WeightedCh3) {
    for (size_t i = 0; i < p.servers.size(); ++i) p.servers[i].fraction = weights[i];
  }
  for (const pool_config& have : out_) {
    if (have.name == p.name || have.name.starts_with(p.name + "~")) {
      bool same = have.dist == p.dist && have.buckets == p.buckets && have.servers.size() == p.servers.size();
      for (size_t i = 0; same && i < p.servers.size(); ++i) same = have.servers[i].fraction == p.servers[i].fraction;
      if (same) return have.name;
    }
  }
  if (have(p.name)) {
    std::string how(to_string(dist));
    if (buckets != 0) {
      how += '~';
      how += std::to_string(buckets);
      how += "buckets";
    }
    p.name += "~" + how;
    for (int n = 2; have(p.name); ++n) {
      p.name = d.base.name + "~" + how + std::to_string(n);
    }
  }
  out_.push_back(p);
  return p.name;
}

std::vector<std::string> pools::each_server(const pool_def& d) {
  std::vector<std::string> names;
  for (size_t i = 0; i < d.base.servers.size(); ++i) {
    const backend_server& s = d.base.servers[i];
    pool_config one = d.base;
    one.name = d.base.name + "#" + std::to_string(i + 1);
    one.servers = {s};
    one.dist = kinds::distribution_kind::Ch3;
    if (!have(one.name)) out_.push_back(one);
    names.push_back(one.name);
  }
  return names;
}

}  // namespace ithaca::config::mcrouter
