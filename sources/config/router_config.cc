#include "router_config.h"

#include "config.h"
#include "route_kind_info.h"
#include "units.h"

namespace ithaca::config {

void resolve_pool_tls(router_config& rc) {
  for (pool_config& p : rc.pools) p.tls = p.tls_own.enabled ? merge_tls(rc.tls, p.tls_own) : backend_tls{};
}

const char* kind_name(const route_config& r) { return r.module != nullptr ? r.module->name : "ref"; }

route_config ref_node(std::string name, int line) {
  route_config r;
  r.name = std::move(name);
  r.line = line;
  return r;
}

const std::vector<std::string>& known_failover_errors() {
  // carbon's error results (isErrorResult), mc_res_ dropped.
  static const std::vector<std::string> names = {
      "ooo",          "timeout",    "connect_timeout",   "connect_error",     "busy",         "try_again",
      "shutdown",     "tko",        "bad_command",       "bad_key",           "bad_flags",    "bad_exptime",
      "bad_lease_id", "bad_cas_id", "bad_value",         "aborted",           "client_error", "local_error",
      "remote_error", "unknown",    "deadline_exceeded", "permission_denied", "overloaded",
  };
  return names;
}

std::vector<const route_config*> route_config::with_role(std::string_view r) const {
  std::vector<const route_config*> out;
  for (const route_config& c : children) {
    if (c.role == r) out.push_back(&c);
  }
  return out;
}

}  // namespace ithaca::config
