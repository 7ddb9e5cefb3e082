// mcrouter's `pools`, read on demand as PoolRoutes name them (as mcrouter's
// PoolFactory does): servers, server_timeout, connect_timeout, weights,
// inherit; mcrouter's defaults (ascii, 1 s, the hash stop "|#|"). mcrouter
// places keys by the PoolRoute's hash, ithaca by the pool's distribution, so
// a pool placed two ways becomes two pool configs. Internal to the mcrouter
// reader.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "mcrouter_json.h"
#include "router_config.h"

namespace ithaca::config::mcrouter {

class pools {
 public:
  // Pool configs are appended to `out` as routes use them.
  // `timeout_ms`: a pool's server_timeout when it names none (mcrouter's -t).
  pools(json_errors& err, std::vector<pool_config>& out, uint64_t timeout_ms)
      : err_(err), out_(out), default_timeout_ms_(timeout_ms) {}

  // One pool of the config's `pools` object.
  void add(const std::string& name, const YAML::Node& json) { json_[name] = json; }
  // The pool configs made are named `prefix` + their name: a config read
  // into another's pools (a CarbonLookasideRoute's client config) keeps its
  // pool names apart from that config's.
  void name_prefix(std::string prefix) { prefix_ = std::move(prefix); }

  // One place of a pool's `servers` list: a "host:port" server, or a route
  // object (mcrouter's makePool builds it with the route factory, and it
  // takes that place among the pool's destinations, in hashing too).
  struct entry {
    int server = -1;   // an index into pool_def::base.servers; -1: a route
    YAML::Node route;  // the route object, as written (server < 0)
  };
  struct pool_def {
    pool_config base;             // servers and settings; the distribution not yet chosen
    std::vector<entry> entries;   // the `servers` list in its order: base.servers and route objects
    std::vector<double> weights;  // the pool's `weights` (WeightedCh3) by place in entries, or none
    bool has_routes() const { return entries.size() != base.servers.size(); }
    // `servers: []` (mcrouter takes it): a PoolRoute over it answers with an
    // error (error_on_empty, mcrouter's default) or as a NullRoute.
    bool error_on_empty = true;
    bool ok = false;
  };
  // The pool `json` names ("A") or defines ({"name": "A", "servers": ...});
  // nullptr (and an error at `at`) if it cannot be read.
  const pool_def* find(const YAML::Node& json, const YAML::Node& at);
  // The name of a pool config over d's servers placed by `dist` (with
  // `weights` for WeightedCh3, in `buckets` with bucketize): d's own name the
  // first time, "NAME~dist" when another PoolRoute places the same pool
  // differently.
  std::string placed(const pool_def& d, kinds::distribution_kind dist, const std::vector<double>& weights,
                     uint32_t buckets = 0);
  // "Pool|A": one single-server pool config per server ("A#1", "A#2", ...;
  // not "A/host:port", which `stats servers` would print as POOL/ADDRESS
  // twice), in the order of base.servers (route objects have none).
  std::vector<std::string> each_server(const pool_def& d);

 private:
  bool read(const YAML::Node& json, pool_def& d, std::set<std::string>& seen);
  uint64_t timeout_of(const YAML::Node& t, const std::string& what);
  // `port`: the pool's port_override (0: none), which replaces the server's port.
  bool server(const YAML::Node& s, backend_server& b, const std::string& what, uint16_t port = 0);
  bool have(const std::string& name) const;

  json_errors& err_;
  std::vector<pool_config>& out_;
  uint64_t default_timeout_ms_;
  std::map<std::string, YAML::Node> json_;  // by name, as written
  std::map<std::string, pool_def> defs_;    // by name, once read
  std::string prefix_;
};

}  // namespace ithaca::config::mcrouter
