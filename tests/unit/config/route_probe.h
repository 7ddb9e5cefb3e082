// What the config tests ask of a read route node: its kind by name and the
// pool it names (route_config keeps a kind's options in the kind's own
// struct, which only its module sees; describe_options shows them all).
#pragma once

#include <string>

#include "route_kind_info.h"
#include "router_config.h"

namespace ithaca::config {

inline bool is(const route_config& r, const char* kind) { return std::string(kind_name(r)) == kind; }

inline std::string pool_of(const route_config& r) {
  const std::string* p = pool_named(r);
  return p != nullptr ? *p : "(names no pool)";
}

}  // namespace ithaca::config
