#include "router_config.h"

#include "config.h"
#include "route_kind_info.h"
#include "units.h"

namespace ithaca::config {

void resolve_pool_tls(router_config& rc) {
  for (pool_config& p : rc.pools) p.tls = p.tls_own.enabled ? merge_tls(rc.tls, p.tls_own) : backend_tls{};
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

}  // namespace ithaca::config
