#include "router_config.h"

#include "config.h"
#include "route_kind_info.h"
#include "units.h"

namespace ithaca::config {

const char* to_string(hash_function h) {
  switch (h) {
    case hash_function::OneAtATime: return "one_at_a_time";
    case hash_function::Md5: return "md5";
    case hash_function::Crc16: return "crc16";
    case hash_function::Crc32: return "crc32";
    case hash_function::Crc32a: return "crc32a";
    case hash_function::Fnv1_64: return "fnv1_64";
    case hash_function::Fnv1a_64: return "fnv1a_64";
    case hash_function::Fnv1_32: return "fnv1_32";
    case hash_function::Fnv1a_32: return "fnv1a_32";
    case hash_function::Hsieh: return "hsieh";
    case hash_function::Murmur: return "murmur";
    case hash_function::Jenkins: return "jenkins";
  }
  return "?";
}

const char* to_string(distribution d) {
  switch (d) {
    case distribution::Ketama: return "ketama";
    case distribution::Modula: return "modula";
    case distribution::Random: return "random";
    case distribution::Jump: return "jump";
    case distribution::Rendezvous: return "rendezvous";
    case distribution::LibmemcachedKetama: return "libmemcached_ketama";
    case distribution::Ch3: return "ch3";
    case distribution::WeightedCh3: return "weighted_ch3";
    case distribution::McrouterCrc32: return "mcrouter_crc32";
  }
  return "?";
}

void resolve_pool_tls(router_config& rc) {
  for (pool_config& p : rc.pools) p.tls = p.tls_own.enabled ? merge_tls(rc.tls, p.tls_own) : backend_tls{};
}

const char* to_string(backend_protocol p) {
  switch (p) {
    case backend_protocol::Ascii: return "ascii";
    case backend_protocol::Meta: return "meta";
    case backend_protocol::Auto: return "auto";
  }
  return "?";
}

namespace {

struct kind_entry {
  route_kind kind;
  const char* name;
  const char* mcrouter;  // mcrouter's type name ("" = none)
};
constexpr kind_entry kKindNames[] = {
    {route_kind::Local, "local", ""},
    {route_kind::Pool, "pool", "PoolRoute"},
    {route_kind::Ref, "ref", ""},
    {route_kind::Prefix, "prefix", "PrefixSelectorRoute"},
    {route_kind::Operation, "operation", "OperationSelectorRoute"},
    {route_kind::Failover, "failover", "FailoverRoute"},
    {route_kind::FailoverExptime, "failover_exptime", "FailoverWithExptimeRoute"},
    {route_kind::Shadow, "shadow", "ShadowRoute"},
    {route_kind::Hash, "hash", "HashRoute"},
    {route_kind::RateLimit, "rate_limit", "RateLimitRoute"},
    {route_kind::Error, "error", "ErrorRoute"},
    {route_kind::Null, "null", "NullRoute"},
    {route_kind::Module, "", ""},
};

constexpr const char* kOpClassNames[kOpClasses] = {"get", "set", "delete", "arithmetic", "touch"};

}  // namespace

const char* to_string(route_kind k) {
  for (const kind_entry& n : kKindNames) {
    if (n.kind == k) return n.name;
  }
  return "?";
}

const char* kind_name(const route_config& r) {
  return r.module != nullptr ? r.module->name : to_string(r.kind);
}

bool route_kind_from_string(std::string_view name, route_kind& out) {
  for (const kind_entry& n : kKindNames) {
    if (name == n.name) {
      out = n.kind;
      return true;
    }
  }
  return false;
}

const char* mcrouter_name(route_kind k) {
  for (const kind_entry& n : kKindNames) {
    if (n.kind == k) return n.mcrouter;
  }
  return "";
}

const std::vector<std::string>& known_failover_errors() {
  // carbon's error results (isErrorResult), mc_res_ dropped.
  static const std::vector<std::string> names = {
      "ooo",         "timeout",   "connect_timeout", "connect_error", "busy",         "try_again",
      "shutdown",    "tko",       "bad_command",     "bad_key",       "bad_flags",    "bad_exptime",
      "bad_lease_id", "bad_cas_id", "bad_value",     "aborted",       "client_error", "local_error",
      "remote_error", "unknown",  "deadline_exceeded", "permission_denied", "overloaded",
  };
  return names;
}

const char* to_string(op_class c) { return kOpClassNames[static_cast<std::size_t>(c)]; }

bool op_class_from_string(std::string_view name, op_class& out) {
  for (std::size_t i = 0; i < kOpClasses; ++i) {
    if (name == kOpClassNames[i]) {
      out = static_cast<op_class>(i);
      return true;
    }
  }
  return false;
}

std::vector<const route_config*> route_config::with_role(std::string_view r) const {
  std::vector<const route_config*> out;
  for (const route_config& c : children) {
    if (c.role == r) out.push_back(&c);
  }
  return out;
}

// "host:port[:weight][ name]", "[v6]:port[:weight][ name]", "unix:/path[ name]".
bool parse_backend_server(std::string_view text, backend_server& out, std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error) *error = "bad server '" + std::string(text) + "': " + why;
    return false;
  };
  std::string_view spec = text;
  const size_t space = spec.find_first_of(" \t");
  if (space != std::string_view::npos) {
    std::string_view name = spec.substr(space);
    name.remove_prefix(std::min(name.find_first_not_of(" \t"), name.size()));
    if (name.empty() || name.find_first_of(" \t") != std::string_view::npos) {
      return fail("expected 'host:port[:weight] [name]'");
    }
    out.name = std::string(name);
    spec = spec.substr(0, space);
  }
  if (spec.starts_with("unix:")) {
    if (spec.size() <= 5 || spec[5] != '/') return fail("a unix socket path must be absolute");
    if (spec.size() - 5 > kMaxUnixPath) return fail("unix socket path too long");
    out.address = std::string(spec);
    out.written = std::string(text);
    return true;
  }
  // A weight is a third ':'-part after the port: "h:p:w" or "[v6]:p:w".
  std::string_view hostport = spec;
  const size_t close = spec.find(']');
  const size_t port_colon = spec.find(':', close == std::string_view::npos ? 0 : close);
  if (port_colon != std::string_view::npos) {
    const size_t weight_colon = spec.find(':', port_colon + 1);
    if (weight_colon != std::string_view::npos && (close != std::string_view::npos || spec.find(':') == port_colon)) {
      uint64_t w = 0;
      if (!parse_unsigned(spec.substr(weight_colon + 1), w) || w < 1 || w > 1000000) {
        return fail("weight must be an integer from 1 to 1000000");
      }
      out.weight = static_cast<uint32_t>(w);
      hostport = spec.substr(0, weight_colon);
    }
  }
  tcp_address a;
  std::string why;
  if (!parse_tcp_address(hostport, 0, a, &why)) return fail(why);
  if (a.port == 0) {
    // Not written, or written as 0: only the first takes the default.
    parse_tcp_address(hostport, kDefaultPort, a, &why);
    if (a.port == 0) return fail("port 0 is not a server's port");
    out.port_written = false;
  }
  out.address = to_string(a);
  out.written = std::string(text);
  return true;
}

}  // namespace ithaca::config
