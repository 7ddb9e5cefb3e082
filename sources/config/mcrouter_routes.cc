#include "mcrouter_routes.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <span>

#include "jsonm_hash.h"
#include "mcrouter_jsonm.h"
#include "route_kind_reader.h"

namespace ithaca::config::mcrouter {

namespace {

// mcrouter's route types ithaca has no equivalent for (refused by name).
const std::set<std::string> kUnsupportedTypes = {
    "AsynclogRoute",
    "BlackholeRoute",
    "DistributionRoute",
    "HashStopAllowListRoute",
    "KeyParseRoute",
    "OriginalClientHashRoute",
    "SetDistributionTargetRoute",
    "SRRoute",
    "StagingRoute",
    "AxonLogRoute",
    "DestinationRoute",
    "OutstandingLimitRoute",
};

}  // namespace

bool provider::knows(const std::string& type) {
  return type == "Pool" || type == "PoolRoute" || type == "LatestRoute" || type == "McRefillRoute" ||
         find_mcrouter_kind(type) != nullptr;
}

// McRefillRoute {primary, refill} (mcrouter's test_mcrefill.json): its code
// is not in the open mcrouter tree (MemcacheRouterInfo::hasMcRefillRoute is
// false), so ithaca reads it by its name and keys: requests go to primary, a
// get primary misses is read from refill and the value added back to
// primary. That is ithaca's warm_up route with primary as cold and refill as
// warm, its fills keeping refill's TTL (exptime 0).
route_config provider::refill_route(const YAML::Node& json, const YAML::Node& at) {
  if (!json.IsMap()) {
    err_.fail(at, "McRefillRoute should be an object");
    return null_route(err_.line(at));
  }
  err_.allow(json, "McRefillRoute", {"primary", "refill"});
  for (const char* key : {"primary", "refill"}) {
    if (!json[key]) {
      err_.fail(json, std::string("McRefillRoute: no ") + key + " route");
      return null_route(err_.line(at));
    }
  }
  route_config r = module_node("warm_up", route_format::Mcrouter, err_.line(at));
  route_config cold = f_.one(json["primary"], "primary");
  cold.role = "cold";
  route_config warm = f_.one(json["refill"], "refill");
  warm.role = "warm";
  r.children.push_back(std::move(cold));
  r.children.push_back(std::move(warm));
  return r;
}

// CarbonLookasideRoute (its module: route/routes/carbon_lookaside_route.cc):
// its options and child as any kind's, and its lookaside, the route of the
// client config its flavor file names (mcrouter's default flavor "web" is a
// file mcrouter looks up by name; ithaca reads file:PATH only).
route_config provider::carbon_lookaside(const YAML::Node& json, const YAML::Node& at) {
  route_config r = module_route(*find_mcrouter_kind("CarbonLookasideRoute"), json, at);
  if (!json.IsMap()) return r;
  const YAML::Node flavor = json["flavor"];
  const std::string name = flavor && flavor.IsScalar() ? flavor.Scalar() : std::string("web");
  route_config client;
  if (!f_.lookaside_client(name, flavor ? flavor : at, client)) return r;
  client.role = "lookaside";
  r.children.push_back(std::move(client));
  return r;
}

// mcrouter's ShadowRoute over several children (makeShadowRoutes): a list
// of routes, child i shadowed by the shadows whose index_range [A, B) holds
// i (or that list keys_to_shadow), each child with its own shadow route (its
// shadows' index_range read as [0, 1): that one child), a child no shadow
// covers as it is. Each is the ShadowRoute module's node over that child.
std::vector<route_config> provider::shadow_routes(const YAML::Node& json, const YAML::Node& at,
                                                  std::vector<route_config> children) {
  std::vector<route_config> out;
  const YAML::Node shadows = json["shadows"];
  for (std::size_t i = 0; i < children.size(); ++i) {
    YAML::Node mine(YAML::NodeType::Sequence);
    for (const YAML::Node& s : shadows) {
      if (!s.IsMap()) continue;
      const YAML::Node keys = s["keys_to_shadow"];
      const YAML::Node range = s["index_range"];
      int64_t a = 0, b = 0;
      const bool covers = range && range.IsSequence() && range.size() == 2 && as_int(range[0], a) &&
                          as_int(range[1], b) && a >= 0 && static_cast<std::size_t>(a) <= i &&
                          i < static_cast<std::size_t>(b);
      if (!covers && !(keys && keys.IsSequence() && keys.size() > 0)) continue;
      YAML::Node copy = YAML::Clone(s);
      if (range) {
        YAML::Node one(YAML::NodeType::Sequence);
        one.push_back(0);
        one.push_back(1);
        copy["index_range"] = one;
      }
      mine.push_back(copy);
    }
    if (mine.size() == 0) {
      out.push_back(std::move(children[i]));
      continue;
    }
    YAML::Node one = YAML::Clone(json);
    one["children"] = "NullRoute";  // replaced by child i below
    one["shadows"] = mine;
    route_config r = module_route(*find_mcrouter_kind("ShadowRoute"), one, at);
    for (route_config& c : r.children) {
      if (c.role == "normal") {
        c = std::move(children[i]);
        c.role = "normal";
        break;
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

route_config null_route(int line) { return module_node("null", route_format::Mcrouter, line); }

std::vector<route_config> provider::create(const std::string& type, const YAML::Node& json, const YAML::Node& at) {
  if (type == "Pool") return pool_servers(json, at);
  if (type == "PoolRoute") return {pool_route(json, at)};
  if (type == "PrefixSelectorRoute") {
    err_.fail(at, "PrefixSelectorRoute is only read at the top of `route` or `routes` (as mcrouter reads it)");
    return {};
  }
  // mcrouter's older name of OperationSelectorRoute, which it still reads.
  const std::string_view kind = type == "PrefixPolicyRoute" ? std::string_view("OperationSelectorRoute") : type;
  if (type == "CarbonLookasideRoute") return {carbon_lookaside(json, at)};
  if (type == "ShadowRoute" && json.IsMap() && json["children"] && json["shadows"] && json["shadows"].IsSequence()) {
    std::vector<route_config> children = f_.list(json["children"]);
    if (children.size() > 1) return shadow_routes(json, at, std::move(children));
  }
  if (const route_kind_info* k = find_mcrouter_kind(kind)) return {module_route(*k, json, at)};
  if (type == "McRefillRoute") return {refill_route(json, at)};
  if (type == "LatestRoute") {
    // It picks among its children by the host's id, which ithaca does not
    // imitate; with no child or one mcrouter makes the NullRoute or that
    // child (LatestRoute.h), and so does ithaca.
    std::vector<route_config> children;
    if (!json.IsMap()) {
      children = f_.list(json);
    } else if (const YAML::Node c = json["children"]) {
      children = f_.list(c);
    }
    if (children.empty()) return {null_route(err_.line(at))};
    if (children.size() == 1) return children;
    std::vector<double> weights;
    if (json.IsMap() && json["weights"]) {
      double f = 0;
      for (const YAML::Node& x : json["weights"]) weights.push_back(as_number(x, f) ? f : -1);
    }
    if (json.IsMap()) {
      err_.allow(json, "LatestRoute",
                 {"children", "weights", "failover_count", "salt", "thread_local_failover", "failover_errors",
                  "failover_policy"});
    }
    return {latest_route(std::move(children), json.IsMap() ? json : YAML::Node(YAML::NodeType::Map), std::move(weights),
                         at)};
  }
  if (kUnsupportedTypes.count(type) != 0) {
    err_.fail(at, "mcrouter's " + type + " is not supported by ithaca");
    return {};
  }
  std::vector<std::string> supported = {"PoolRoute", "Pool"};
  for (const route_kind_info* k : route_kinds()) {
    if (k->mcrouter != nullptr) supported.emplace_back(k->mcrouter);
  }
  const std::string close = closest_key(type, supported);
  // mcrouter's words (McRouteHandleProvider), at the line of the object's
  // "type" where it names one, as mcrouter counts it; then ithaca's hint.
  const bool typed = json.IsMap() && json["type"];
  const YAML::Node where = typed ? json["type"] : at;
  err_.fail(where, "Unknown RouteHandle: " + type + (typed ? " line: " + std::to_string(err_.line(where)) : "") +
                       (close.empty() ? std::string() : " (did you mean '" + close + "'?)"));
  return {};
}

namespace {

// A registered kind's node (route_kind_reader.h) with mcrouter's spellings,
// values (integers of seconds, unquoted booleans) and messages.
class json_kind_reader final : public route_kind_reader {
 public:
  json_kind_reader(route_factory& f, json_errors& err, const YAML::Node& json, const YAML::Node& at)
      : f_(f), err_(err), json_(json), at_(at) {}
  route_format format() const override { return route_format::Mcrouter; }
  bool has(const char* key) override { return json_.IsMap() && json_[key]; }
  bool seconds(const char* key, std::uint32_t& out) override {
    if (!has(key)) return false;
    int64_t v = 0;
    if (!as_int(json_[key], v) || v < 0 || v > 30 * 24 * 3600) {
      err_.fail(json_[key], what() + ": " + key + " is not an integer from 0 to 2592000");
      return false;
    }
    out = static_cast<std::uint32_t>(v);
    return true;
  }
  bool flag(const char* key, bool& out) override {
    if (!has(key)) return false;
    if (!as_bool(json_[key], out)) {
      err_.fail(json_[key], what() + ": " + key + " is not a boolean");
      return false;
    }
    return true;
  }
  bool choice(const char* key, std::span<const char* const> names, int& out) override {
    if (!has(key)) return false;
    const YAML::Node v = json_[key];
    std::string list;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (v.IsScalar() && v.Scalar() == names[i]) {
        out = static_cast<int>(i);
        return true;
      }
      list += std::string(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + "'" + names[i] + "'";
    }
    err_.fail(v, what() + ": " + key + " '" + (v.IsScalar() ? v.Scalar() : "") + "' is not supported by ithaca (" +
                     list + ")");
    return false;
  }
  bool text(const char* key, std::string& out) override {
    if (!has(key)) return false;
    out = json_[key].Scalar();
    return true;
  }
  // A list slot spelled `children` takes the short form's rest as well
  // ("AllSyncRoute|Pool|A", or a list): mcrouter's children of a list route.
  void children(const char* key, const child_slot& slot, route_config& r) override {
    std::vector<route_config> made;
    if (!json_.IsMap()) {
      if (slot.list) made = f_.list(json_);
    } else if (const YAML::Node c = json_[key]) {
      if (slot.list) {
        made = f_.list(c);
      } else {
        made.push_back(f_.one(c, key));
      }
    } else if (!slot.list && slot.min > 0) {
      err_.fail(json_, slot.mcrouter_missing != nullptr ? std::string(slot.mcrouter_missing)
                                                        : what() + ": no " + key + " route");
    }
    for (route_config& c : made) {
      c.role = slot.role;
      r.children.push_back(std::move(c));
    }
  }
  void fail(std::string message) override { err_.fail(json_.IsMap() ? json_ : at_, message); }
  void fail_at(const char* key, std::string message) override { err_.fail(has(key) ? json_[key] : at_, message); }
  const YAML::Node* value(const char* key) override {
    if (!has(key)) return nullptr;
    held_.push_back(json_[key]);
    return &held_.back();
  }
  void fail_node(const YAML::Node& at, std::string message) override { err_.fail(at, message); }
  route_config route_at(const YAML::Node& n, const char* role, const char* what) override {
    route_config r = f_.one(n, what);
    r.role = role;
    return r;
  }
  std::vector<route_config> routes_at(const YAML::Node& n, const char* role) override {
    std::vector<route_config> out = f_.list(n);
    for (route_config& r : out) r.role = role;
    return out;
  }
  void check_keys(const YAML::Node& map, const std::string& what, std::initializer_list<const char*> keys) override {
    err_.allow(map, what, keys);
  }
  bool routable(const YAML::Node& n) override { return f_.known(n); }

 private:
  std::deque<YAML::Node> held_;  // the values value() gave out, kept where they are
  route_factory& f_;
  json_errors& err_;
  const YAML::Node& json_;
  const YAML::Node& at_;
};

}  // namespace

// A registered kind (route_kind_info.h): its keys are the description's
// mcrouter spellings; an object, or for a list kind a short form's rest.
route_config provider::module_route(const route_kind_info& k, const YAML::Node& json, const YAML::Node& at) {
  using collapse = route_kind_info::collapse;
  if (k.mcrouter_collapse == collapse::ScalarIsChild && !json.IsMap()) return f_.one(json, k.mcrouter);
  route_config r;
  r.line = err_.line(at);
  // Not an object: a list kind's short form ("AllSyncRoute|Pool|A"), the
  // text of a kind that takes one ("ErrorRoute|text"), or nothing for a kind
  // that needs nothing ("NullRoute").
  const bool list_kind = !k.children.empty() && k.children.front().list;
  const bool takes_nothing = k.children.empty() && k.options.empty();
  const bool scalar_ok = k.mcrouter_scalar != nullptr && (json.IsScalar() || json.IsNull());
  if (!json.IsMap() && !(list_kind && !json.IsNull()) && !scalar_ok && !(takes_nothing && json.IsNull())) {
    err_.fail(at, std::string(k.mcrouter) +
                      (k.mcrouter_scalar != nullptr ? " should be a string or an object" : " should be an object"));
    return r;
  }
  std::vector<const char*> keys;
  for (const child_slot& c : k.children) {
    if (c.mcrouter != nullptr) keys.push_back(c.mcrouter);
  }
  for (const option_spec& o : k.options) {
    if (o.mcrouter != nullptr) keys.push_back(o.mcrouter);
  }
  err_.allow(json, k.mcrouter, keys);
  if (scalar_ok && !json.IsMap()) {
    // The string is the option's value: read it as the object {option: string}.
    YAML::Node object(YAML::NodeType::Map);
    if (json.IsScalar()) object[k.mcrouter_scalar] = json;
    json_kind_reader(f_, err_, object, at).read(k, r);
  } else {
    json_kind_reader(f_, err_, json, at).read(k, r);
  }
  if (k.mcrouter_collapse != collapse::None && r.children.empty()) return null_route(r.line);
  if (k.mcrouter_collapse == collapse::NullOrSingleton && r.children.size() == 1) return std::move(r.children[0]);
  return r;
}

void provider::salt(const YAML::Node& json, const std::string& what) {
  if (const YAML::Node s = json["salt"]; s && !s.Scalar().empty()) {
    err_.fail(s, what + ": a salt changes placement and is not supported by ithaca");
  }
}

// mcrouter's PoolRoute (object or "Pool|name" string): a `pool` route with
// reliable deletes on (mcrouter's asynclog) over the named pool placed by
// its hash (Ch3, WeightedCh3 with weights from the pool or the route, or
// Crc32: each placement its own pool config, pools::placed), wrapped in a
// rate_limit route when it has `rates`. [the config loading thread; no lock]
route_config provider::pool_route(const YAML::Node& json, const YAML::Node& at) {
  route_config r;
  r.line = err_.line(at);
  bool reliable_deletes = asynclog_;  // mcrouter wraps a PoolRoute in its asynclog
  // reset(), not =: assigning to a YAML::Node writes through to the node
  // it refers to.
  YAML::Node pool_json;
  pool_json.reset(json);
  if (json.IsMap()) {
    err_.allow(
        json, "PoolRoute",
        {"pool", "hash", "asynclog", "asynclog_name", "rates", "shadows", "shadow_policy", "bucketize", "total_buckets",
         "bucketization_keyspace", "total_buckets_by_prefix", "shard_splits", "split_shard_fanout", "slow_warmup"});
    if (!json["pool"]) {
      err_.fail(at, "PoolRoute: pool not found");
      return r;
    }
    pool_json.reset(json["pool"]);
    if (const YAML::Node a = json["asynclog"]; a && !as_bool(a, reliable_deletes)) {
      err_.fail(a, "PoolRoute: asynclog is not a boolean");
    }
  } else if (!json.IsScalar()) {
    err_.fail(at, "PoolRoute should be object or string");
    return r;
  }
  const pools::pool_def* d = pools_.find(pool_json, at);
  if (d == nullptr) return r;
  if (d->entries.empty()) {
    // mcrouter's HashRoute over no destination (HashRouteFactory.h): an
    // ErrorRoute with these words, or a NullRoute without error_on_empty.
    return d->error_on_empty ? module_node("error", route_format::Mcrouter, r.line,
                                           {{"message", "HashRoute with empty children, name: " + d->base.name}})
                             : null_route(r.line);
  }
  if (json.IsMap() && json["hash"] && json["hash"].IsMap() && json["hash"]["hash_func"] &&
      json["hash"]["hash_func"].Scalar() == "LoadBalancer") {
    return load_balanced_pool(json["hash"], pool_json, at);
  }
  if (json.IsMap() && json["hash"] &&
      ((json["hash"].IsScalar() && json["hash"].Scalar() == "Latest") ||
       (json["hash"].IsMap() && json["hash"]["hash_func"] && json["hash"]["hash_func"].Scalar() == "Latest"))) {
    // mcrouter's HashRouteFactory: a LatestRoute over the pool's servers,
    // its options (and weights: the pool's unless the hash has its own)
    // read from the hash object.
    const YAML::Node h = json["hash"];
    YAML::Node opts(YAML::NodeType::Map);
    std::vector<double> weights = d->weights;
    if (h.IsMap()) {
      err_.allow(h, "PoolRoute hash",
                 {"hash_func", "weights", "failover_count", "salt", "thread_local_failover", "failover_errors",
                  "failover_policy"});
      opts.reset(h);
      if (const YAML::Node w = h["weights"]) {
        weights.clear();
        double f = 0;
        for (const YAML::Node& x : w) weights.push_back(as_number(x, f) ? f : -1);
      }
    }
    return latest_route(pool_servers(pool_json, at), opts, std::move(weights), at);
  }
  std::vector<double> weights = d->weights;
  kinds::distribution_kind dist =
      weights.empty() ? kinds::distribution_kind::Ch3 : kinds::distribution_kind::WeightedCh3;
  if (json.IsMap()) {
    if (const YAML::Node h = json["hash"]) {
      std::string fn;
      if (h.IsScalar()) {
        fn = h.Scalar();
      } else if (h.IsMap()) {
        err_.allow(h, "PoolRoute hash", {"hash_func", "salt", "weights"});
        salt(h, "PoolRoute hash");
        fn = h["hash_func"] ? h["hash_func"].Scalar() : "";
        if (const YAML::Node w = h["weights"]) {
          weights.clear();
          double f = 0;
          for (const YAML::Node& x : w) weights.push_back(as_number(x, f) ? f : -1);
        }
      } else {
        err_.fail(h, "PoolRoute: hash is not object/string");
      }
      if (fn == "Ch3") {
        dist = kinds::distribution_kind::Ch3;
      } else if (fn == "Crc32") {
        dist = kinds::distribution_kind::McrouterCrc32;
      } else if (fn == "WeightedCh3") {
        dist = kinds::distribution_kind::WeightedCh3;
      } else if (fn == "ConstShard") {
        dist = kinds::distribution_kind::ConstShard;
      } else if (!fn.empty()) {
        err_.fail(
            h, "PoolRoute: hash_func '" + fn + "' is not supported by ithaca (Ch3, WeightedCh3, Crc32 or ConstShard)");
      }
    }
  }
  // mcrouter reads the first weight of each server and leaves any extra;
  // a server with none gets 0.5 (its WeightedChHashFuncBase logs "CONFIG IS
  // BROKEN" and goes on).
  const std::size_t places = d->entries.size();
  if (dist == kinds::distribution_kind::WeightedCh3) weights.resize(places, 0.5);
  if (weights.size() > places) weights.resize(places);
  if (dist == kinds::distribution_kind::WeightedCh3 &&
      std::any_of(weights.begin(), weights.end(), [](double w) { return w < 0 || w > 1; })) {
    err_.fail(at, "PoolRoute: WeightedCh3 weights are numbers from 0 to 1 (pool '" + d->base.name + "')");
    return r;
  }
  const uint32_t buckets = json.IsMap() ? bucketize(json) : 0;
  if (d->has_routes()) {
    // Route objects among the servers: mcrouter's own shape, a HashRoute over
    // the pool's destinations (each server alone, each route object in its
    // place). What ithaca places per server of a pool is refused over it.
    for (const char* key : {"shadows", "slow_warmup", "bucketize"}) {
      if (json.IsMap() && json[key]) {
        err_.fail(json[key], std::string("PoolRoute: ") + key + " over pool '" + d->base.name +
                                 "', which has route objects among its servers, is not supported by ithaca");
      }
    }
    r = hash_over_places(pool_json, at, dist, weights, reliable_deletes);
  } else {
    const std::string placed = pools_.placed(*d, dist, weights, buckets);
    r = module_node("pool", route_format::Mcrouter, r.line,
                    {{"pool", placed}, {"reliable_deletes", reliable_deletes ? "true" : "false"}});
    if (json.IsMap() && json["slow_warmup"]) r = slow_warmup(json["slow_warmup"], at, std::move(r));
    if (json.IsMap() && json["shadows"]) r = pool_shadows(json, at, std::move(r), placed);
  }
  if (json.IsMap() && json["rates"]) {  // PoolRoute's own rate limit: a RateLimitRoute in front of it
    route_config limited;
    limited.line = r.line;
    YAML::Node object(YAML::NodeType::Map);
    object["rates"] = json["rates"];
    json_kind_reader(f_, err_, object, at).read_options(*find_route_kind("rate_limit"), limited);
    r.role = "target";
    limited.children.push_back(std::move(r));
    r = std::move(limited);
  }
  if (json.IsMap() && json["shard_splits"]) {  // a ShardSplitRoute around it (mcrouter's order)
    if (buckets != 0) {
      err_.fail(json["shard_splits"], "PoolRoute: shard_splits of a bucketized pool are not supported by ithaca");
    }
    route_config split;
    split.line = r.line;
    YAML::Node object(YAML::NodeType::Map);
    object["shard_splits"] = json["shard_splits"];
    if (json["split_shard_fanout"]) object["split_shard_fanout"] = json["split_shard_fanout"];
    json_kind_reader(f_, err_, object, at).read_options(*find_route_kind("shard_split"), split);
    r.role = "destination";
    split.children.push_back(std::move(r));
    return split;
  }
  return r;
}

// A PoolRoute's `bucketize: true` (mcrouter's McBucketRoute over a hash
// route that places bucket numbers): its total_buckets, required then, as is
// bucketization_keyspace (a label for mcrouter's logs); 0 without bucketize.
// A prefix map of bucket counts, and shadows by bucket range, are refused.
uint32_t provider::bucketize(const YAML::Node& json) {
  bool on = false;
  if (const YAML::Node b = json["bucketize"]; b && !as_bool(b, on)) {
    err_.fail(b, "PoolRoute: bucketize is not a boolean");
    return 0;
  }
  if (!on) return 0;
  const YAML::Node total = json["total_buckets"];
  int64_t n = 0;
  if (!total) {
    err_.fail(json, "McBucketRoute: no total number of buckets");
  } else if (!as_int(total, n) || n < 1 || n > kMaxBuckets) {
    err_.fail(total, "McBucketRoute: total_buckets is not an integer from 1 to " + std::to_string(kMaxBuckets));
  }
  if (const YAML::Node k = json["bucketization_keyspace"]; !k || !is_string(k)) {
    err_.fail(k ? k : json, "McBucketRoute: must have bucketization_keyspace");
  }
  if (const YAML::Node p = json["total_buckets_by_prefix"]) {
    err_.fail(p, "PoolRoute: total_buckets_by_prefix is not supported by ithaca");
  }
  if (json["shadows"]) {
    err_.fail(json["shadows"],
              "PoolRoute: shadows of a bucketized pool (shadowed by bucket range) are not supported by ithaca");
  }
  return n >= 1 && n <= kMaxBuckets ? static_cast<uint32_t>(n) : 0;
}

// A PoolRoute's `slow_warmup` ({failoverTarget, settings}): a slow_warm_up
// route over the pool, which keeps mcrouter's per-destination counts per
// server of the pool (routes/slow_warm_up_route.cc).
route_config provider::slow_warmup(const YAML::Node& json, const YAML::Node& at, route_config pool) {
  if (!json.IsMap()) {
    err_.fail(json, "PoolRoute: slow_warmup must be a json object");
    return pool;
  }
  err_.allow(json, "slow_warmup", {"failoverTarget", "settings"});
  if (!json["failoverTarget"]) {
    err_.fail(json, "PoolRoute: couldn't find 'failoverTarget' property in slow_warmup");
    return pool;
  }
  route_config w;
  w.line = pool.line;
  YAML::Node object(YAML::NodeType::Map);
  if (json["settings"]) object["settings"] = json["settings"];
  json_kind_reader(f_, err_, object, at).read_options(*find_route_kind("slow_warm_up"), w);
  pool.role = "target";
  w.children.push_back(std::move(pool));
  route_config failover = f_.one(json["failoverTarget"], "failoverTarget");
  failover.role = "failover";
  w.children.push_back(std::move(failover));
  return w;
}

// A PoolRoute's `shadows`: mcrouter wraps each destination its shadows'
// index_range covers in a ShadowRoute; ithaca puts one `shadow` route over the
// pool whose shadows know the pool, so each copies only the keys of its
// servers (shadow_route.h). The shadow kind reads the list (its mcrouter
// reader, told the pool by "pool_route", which no file can write: a
// ShadowRoute's keys are checked). No shadow left: the pool alone.
route_config provider::pool_shadows(const YAML::Node& json, const YAML::Node& at, route_config pool,
                                    const std::string& placed) {
  YAML::Node object(YAML::NodeType::Map);
  object["shadows"] = json["shadows"];
  object["pool_route"] = placed;
  if (json["shadow_policy"]) object["shadow_policy"] = json["shadow_policy"];
  route_config s;
  s.line = pool.line;
  json_kind_reader(f_, err_, object, at).read_options(*find_route_kind("shadow"), s);
  if (s.with_role("shadow").empty()) return pool;
  pool.role = "normal";
  s.children.insert(s.children.begin(), std::move(pool));
  return s;
}

// A PoolRoute whose hash_func is "LoadBalancer": mcrouter's LoadBalancerRoute
// over the pool's servers, its options read from the hash object.
// default_server_load_percent (the load assumed before a server reports
// one) has no meaning for ithaca, which counts its own calls in flight.
route_config provider::load_balanced_pool(const YAML::Node& h, const YAML::Node& pool_json, const YAML::Node& at) {
  err_.allow(h, "PoolRoute hash",
             {"hash_func", "salt", "load_ttl_ms", "failover_count", "algorithm", "enable_thrift_server_load",
              "default_server_load_percent"});
  YAML::Node opts(YAML::NodeType::Map);
  for (const char* k : {"salt", "load_ttl_ms", "failover_count", "algorithm", "enable_thrift_server_load"}) {
    if (h[k]) opts[k] = h[k];
  }
  route_config lb;
  lb.line = err_.line(at);
  const route_kind_info& k = *find_route_kind("load_balancer");
  json_kind_reader reader(f_, err_, opts, at);
  reader.read_options(k, lb);
  for (route_config& c : pool_servers(pool_json, at)) lb.children.push_back(std::move(c));
  if (k.finish != nullptr) k.finish(reader, lb);
  if (lb.children.size() == 1) become_only_child(lb);
  return lb;
}

// mcrouter's LatestRoute (LatestRoute.h): a FailoverRoute over
// failover_count (default 5) of `targets`, drawn one after another by a
// weighted pick seeded by this host's id and `salt`: every client of one
// host goes to the same first target and fails over in the same order,
// and hosts spread over the targets by weight. mcrouter seeds with folly's
// hash_combine and picks by WeightedCh3 of the seed's text; ithaca mixes
// with twang_mix64 and picks by cumulative weight, so the target a given
// host draws differs from mcrouter's, while the spread and the failover are
// the same. thread_local_failover (a draw per proxy thread) is taken and
// draws once for the process. failover_errors and failover_policy are
// FailoverRoute's.
route_config provider::latest_route(std::vector<route_config> targets, const YAML::Node& options,
                                    std::vector<double> weights, const YAML::Node& at) {
  if (targets.size() <= 1) return targets.empty() ? null_route(err_.line(at)) : std::move(targets[0]);
  int64_t count = 5;
  if (const YAML::Node c = options["failover_count"]; c && (!as_int(c, count) || count < 1)) {
    err_.fail(c, "LatestRoute: failover_count is not a positive integer");
    count = 5;
  }
  if (const YAML::Node t = options["thread_local_failover"]) {
    bool per_thread = false;
    if (!as_bool(t, per_thread)) err_.fail(t, "LatestRoute: thread_local_failover is not a boolean");
  }
  uint64_t seed = jsonm::twang_mix64(mcrouter_hostid());
  if (const YAML::Node s = options["salt"]) {
    if (!s.IsScalar()) err_.fail(s, "LatestRoute: salt is not a string");
    for (const char ch : s.Scalar()) seed = jsonm::twang_mix64(seed ^ static_cast<unsigned char>(ch));
  }
  weights.resize(targets.size(), 1.0);
  for (double& w : weights) w = w < 0 ? 0 : w;
  route_config r;
  r.line = err_.line(at);
  const route_kind_info& k = *find_route_kind("failover");
  YAML::Node opts(YAML::NodeType::Map);
  for (const char* key : {"failover_errors", "failover_policy"}) {
    if (options[key]) opts[key] = options[key];
  }
  json_kind_reader reader(f_, err_, opts, at);
  reader.read_options(k, r);
  const std::size_t n = std::min(targets.size(), static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < n; ++i) {
    double total = 0;
    for (double w : weights) total += w;
    // A uniform draw in [0, total) from the seed's top 53 bits.
    const double draw = static_cast<double>(seed >> 11) / static_cast<double>(uint64_t{1} << 53) * total;
    std::size_t pick = 0;
    if (total > 0) {
      double sum = 0;
      for (pick = 0; pick + 1 < weights.size(); ++pick) {
        sum += weights[pick];
        if (draw < sum) break;
      }
    } else {
      pick = static_cast<std::size_t>(seed % weights.size());
    }
    r.children.push_back(std::move(targets[pick]));
    targets.erase(targets.begin() + static_cast<std::ptrdiff_t>(pick));
    weights.erase(weights.begin() + static_cast<std::ptrdiff_t>(pick));
    seed = jsonm::twang_mix64(seed + i + 1);
  }
  if (k.finish != nullptr) k.finish(reader, r);
  if (r.children.size() == 1) become_only_child(r);
  return r;
}

// "Pool|A": A's destinations in the order of its `servers` (mcrouter's,
// which AllSyncRoute and the like take as children): each server on its own
// (with reliable deletes when a PoolRoute asks), each route object as the
// route factory reads it.
std::vector<route_config> provider::pool_servers(const YAML::Node& json, const YAML::Node& at, bool reliable_deletes) {
  const pools::pool_def* d = pools_.find(json, at);
  if (d == nullptr) return {};
  const std::vector<std::string> names = pools_.each_server(*d);
  std::vector<route_config> out;
  for (const pools::entry& e : d->entries) {
    if (e.server < 0) {
      out.push_back(f_.one(e.route, "server"));
      out.back().role.clear();
      continue;
    }
    out.push_back(module_node("pool", route_format::Mcrouter, err_.line(at),
                              {{"pool", names[static_cast<std::size_t>(e.server)]},
                               {"reliable_deletes", reliable_deletes ? "true" : "false"}}));
  }
  return out;
}

// A PoolRoute over a pool with route objects among its servers: mcrouter's
// HashRoute over the pool's destinations (pool_servers), placed by the
// PoolRoute's hash (`dist`, with `weights` for WeightedCh3), so a route
// object's place takes its share of the keys as a server's would. One
// destination is that destination (mcrouter's HashRoute of one child).
route_config provider::hash_over_places(const YAML::Node& pool_json, const YAML::Node& at,
                                        kinds::distribution_kind dist, const std::vector<double>& weights,
                                        bool reliable_deletes) {
  std::vector<route_config> places = pool_servers(pool_json, at, reliable_deletes);
  if (places.size() == 1) return std::move(places[0]);
  YAML::Node object(YAML::NodeType::Map);
  switch (dist) {
    case kinds::distribution_kind::McrouterCrc32: object["hash_func"] = "Crc32"; break;
    case kinds::distribution_kind::ConstShard: object["hash_func"] = "ConstShard"; break;
    case kinds::distribution_kind::WeightedCh3: {
      object["hash_func"] = "WeightedCh3";
      YAML::Node w(YAML::NodeType::Sequence);
      for (double x : weights) w.push_back(x);
      object["weights"] = w;
      break;
    }
    default: object["hash_func"] = "Ch3"; break;
  }
  route_config h;
  h.line = err_.line(at);
  json_kind_reader(f_, err_, object, at).read_options(*find_route_kind("hash"), h);
  for (route_config& c : places) {
    c.role.clear();
    h.children.push_back(std::move(c));
  }
  return h;
}

}  // namespace ithaca::config::mcrouter
