// mcrouter's route types, one function each, mapped onto route_config: the
// part of the mcrouter reader that McRouteHandleProvider is to mcrouter (a
// type's name and its JSON -> the route), while the reader itself
// (mcrouter_reader.cc) is its RouteHandleFactory (lists, short forms, named
// handles). Every option a type takes is read or refused, never ignored.
// Internal to the mcrouter reader.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "mcrouter_json.h"
#include "mcrouter_pools.h"
#include "route_kind_info.h"
#include "router_config.h"

namespace ithaca::config::mcrouter {

// What a route type needs from the reader: its children, read as mcrouter's
// factory reads them.
class route_factory {
 public:
  // mcrouter's createList(): a list flattens, a string is a named handle or
  // a short form, an object a route.
  virtual std::vector<route_config> list(const YAML::Node& json) = 0;
  // Exactly one route where mcrouter's create() wants one (`what` names the
  // place in messages).
  virtual route_config one(const YAML::Node& json, const std::string& what) = 0;
  // Whether `json` names something list() can read (a string: a named
  // handle or a known type), so a kind may leave it out instead of failing.
  virtual bool known(const YAML::Node& json) = 0;
  // A CarbonLookasideRoute's lookaside: the route of the client config its
  // flavor (`flavor`, "file:PATH") names, read as a config of its own whose
  // pools join this config's under names of their own. False (and an error
  // at `at`) when it cannot be read.
  virtual bool lookaside_client(const std::string& flavor, const YAML::Node& at, route_config& out) = 0;

 protected:
  ~route_factory() = default;
};

// A list of no route, as one route (mcrouter's makeNullOrSingletonRoute).
route_config null_route(int line);

class provider {
 public:
  // `asynclog`: a PoolRoute spools its failed deletes unless it says
  // otherwise (mcrouter's --asynclog-disable: false).
  provider(route_factory& f, json_errors& err, pools& p, bool asynclog = true)
      : f_(f), err_(err), pools_(p), asynclog_(asynclog) {}

  // The routes of mcrouter type `type` made from `json` (an object, or the
  // rest of a short form "Type|rest", or null), written at `at`. Most types
  // make one route; "Pool" makes one per server. An unknown or unsupported
  // type is an error (and no route).
  std::vector<route_config> create(const std::string& type, const YAML::Node& json, const YAML::Node& at);
  // A route of registered kind `k` (route_kind_info.h) from `json`.
  route_config module_route(const route_kind_info& k, const YAML::Node& json, const YAML::Node& at);
  // Whether `type` is a route type create() reads.
  static bool knows(const std::string& type);

 private:
  void salt(const YAML::Node& json, const std::string& what);
  route_config pool_route(const YAML::Node& json, const YAML::Node& at);
  // mcrouter's furc places up to 2^23 buckets.
  static constexpr int64_t kMaxBuckets = int64_t{1} << 23;
  uint32_t bucketize(const YAML::Node& json);
  route_config refill_route(const YAML::Node& json, const YAML::Node& at);
  route_config carbon_lookaside(const YAML::Node& json, const YAML::Node& at);
  std::vector<route_config> shadow_routes(const YAML::Node& json, const YAML::Node& at,
                                          std::vector<route_config> children);
  route_config slow_warmup(const YAML::Node& json, const YAML::Node& at, route_config pool);
  route_config pool_shadows(const YAML::Node& json, const YAML::Node& at, route_config pool, const std::string& placed);
  route_config load_balanced_pool(const YAML::Node& hash, const YAML::Node& pool_json, const YAML::Node& at);
  route_config latest_route(std::vector<route_config> targets, const YAML::Node& options, std::vector<double> weights,
                            const YAML::Node& at);
  std::vector<route_config> pool_servers(const YAML::Node& json, const YAML::Node& at, bool reliable_deletes = false);
  route_config hash_over_places(const YAML::Node& pool_json, const YAML::Node& at, kinds::distribution_kind dist,
                                const std::vector<double>& weights, bool reliable_deletes);

  route_factory& f_;
  json_errors& err_;
  pools& pools_;
  bool asynclog_ = true;
};

}  // namespace ithaca::config::mcrouter
