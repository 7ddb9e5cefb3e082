// The `routing_prefix` route: mcrouter's routing prefixes (its config's
// `routes`, each with `aliases`, and its RootRoute). A key that starts
// "/region/cluster/" goes to the route of that prefix, without it: the
// prefix is taken off every key (they hash and reach servers without it,
// unless a pool has keep_routing_prefix) and put back before the reply.
// A key with no prefix goes to the default route (mcrouter's -R,
// `--route-prefix`, or the node's `default_route`). Globs pick several:
// "/*/*/" every route, "/region/*/" the routes of a region, "/a*/b/" those
// matching; a write goes to the first of them (the default route first when
// it matches) for its reply and as a detached copy to the others, as
// mcrouter's RootRoute sends them; a read asks the first only. A prefix no
// route has tries "/region/fallback/", then fails with mcrouter's
// "RootRoute: No rh found" unless send_invalid_route_to_default.
//
// With flush_all_pools (the mcrouter dialect's root, as its ProxyRoute
// does), flush_all goes to every server of every pool of the config
// (tree_builder::all_pools), whatever the routes.
//
// A multi-key get is split by (route, prefix): one child request per group,
// hits merged back in the client's key order (selector_route.h does the same
// for a selector). [the client's worker; never blocks, no lock]
#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "async_runner.h"
#include "command_class.h"
#include "handle_walk.h"
#include "pool_route.h"
#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"
#include "yaml_section.h"

namespace ithaca::route {

namespace {

constexpr std::string_view kBroadcastPrefix = "/*/*/";
constexpr std::string_view kNoRoute = "SERVER_ERROR RootRoute: No rh found";

// mcrouter's key layout: "/region/cluster/rest" has the prefix
// "/region/cluster/" (the part through the third slash; the parts may be
// empty in a key, not in a config). 0: none.
std::size_t prefix_length(std::string_view key) {
  if (key.empty() || key[0] != '/') return 0;
  std::size_t pos = 1;
  for (int i = 0; i < 2; ++i) {
    pos = key.find('/', pos);
    if (pos == std::string_view::npos) return 0;
    ++pos;
  }
  return pos;
}

// mcrouter's match_pattern_route: '*' matches any run of characters other
// than '/'.
bool glob_matches(std::string_view pattern, std::string_view route) {
  std::size_t p = 0, r = 0;
  while (p < pattern.size()) {
    if (r == route.size()) return false;
    if (pattern[p] == '*') {
      while (p < pattern.size() && pattern[p] == '*') ++p;
      if (p == pattern.size()) return route.find('/', r) == std::string_view::npos;
      if (pattern[p] == '/') {
        r = route.find('/', r);
        if (r == std::string_view::npos) return false;
        continue;
      }
      for (; r < route.size() && route[r] != '/'; ++r) {
        if (glob_matches(pattern.substr(p), route.substr(r))) return true;
      }
      return false;
    }
    if (pattern[p++] != route[r++]) return false;
  }
  return r == route.size();
}

std::string_view region_of(std::string_view prefix) {
  const std::size_t slash = prefix.find('/', 1);
  return prefix.substr(1, slash == std::string_view::npos ? 0 : slash - 1);
}

class routing_prefix_route final : public route {
 public:
  // `by_prefix`: every routing prefix and the index of its route in
  // `targets`; `default_prefix` one of them.
  routing_prefix_route(std::string name, std::vector<const route*> targets,
                       std::vector<std::pair<std::string, std::size_t>> by_prefix, std::string default_prefix,
                       bool invalid_to_default, std::vector<std::shared_ptr<const proxy::pool>> flush_pools);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "routing_prefix"; }
  std::vector<const route*> children() const override { return targets_; }
  std::vector<const route*> targets_for(const protocol::request& req) const override;
  std::size_t prefix_taken_off(const protocol::request& req) const override {
    return req.meta_key_binary ? 0 : prefix_length(req.key());
  }
  // mcrouter's RootRoute is the answer's "root" line itself: its picks are
  // shown under it, asked about the key without its prefix.
  void walk_handles(const protocol::request& req, handle_walk& w) const override;

 private:
  using index_list = std::vector<std::size_t>;
  // The routes (indexes into targets_) of a key's prefix, the one that
  // answers first; empty: none.
  index_list pick(std::string_view prefix) const;
  // Sends `req` to the routes after the first, detached (their replies dropped).
  void send_copies(const protocol::request& req, const index_list& to, dispatch_env& env) const;
  dispatch_status split_keys(request_slot& slot, dispatch_env& env) const;

  std::vector<const route*> targets_;
  // Looked up by the key's string_view: no std::string made per request.
  struct routing_prefix_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view v) const { return std::hash<std::string_view>{}(v); }
  };
  std::unordered_map<std::string, std::size_t, routing_prefix_hash, std::equal_to<>> by_route_;  // prefix -> target
  std::vector<std::pair<std::string, std::size_t>> prefixes_;
  std::string default_prefix_;
  std::size_t default_;
  bool invalid_to_default_;
  std::vector<std::shared_ptr<const proxy::pool>> flush_pools_;  // flush_all_pools: every pool; else none
  index_list all_;                                            // every target, the default's first
  std::map<std::string, index_list, std::less<>> by_region_;  // region -> targets, the default's first
};

routing_prefix_route::routing_prefix_route(std::string name, std::vector<const route*> targets,
                                           std::vector<std::pair<std::string, std::size_t>> by_prefix,
                                           std::string default_prefix, bool invalid_to_default,
                                           std::vector<std::shared_ptr<const proxy::pool>> flush_pools)
    : route(std::move(name)),
      targets_(std::move(targets)),
      prefixes_(std::move(by_prefix)),
      default_prefix_(std::move(default_prefix)),
      invalid_to_default_(invalid_to_default),
      flush_pools_(std::move(flush_pools)) {
  for (const auto& [prefix, at] : prefixes_) by_route_.emplace(prefix, at);
  default_ = by_route_.at(default_prefix_);
  auto add_once = [](index_list& l, std::size_t at) {
    if (std::find(l.begin(), l.end(), at) == l.end()) l.push_back(at);
  };
  add_once(all_, default_);
  by_region_[std::string(region_of(default_prefix_))].push_back(default_);
  for (const auto& [prefix, at] : prefixes_) {
    add_once(all_, at);
    add_once(by_region_[std::string(region_of(prefix))], at);
  }
}

routing_prefix_route::index_list routing_prefix_route::pick(std::string_view prefix) const {
  index_list out;
  if (prefix.empty()) return {default_};
  if (prefix == kBroadcastPrefix) {
    out = all_;
  } else if (prefix.find('*') == std::string_view::npos) {
    if (auto it = by_route_.find(prefix); it != by_route_.end()) {
      out.push_back(it->second);
    } else {
      // A cluster the config does not name: its region's fallback, if any.
      const std::string fallback = "/" + std::string(region_of(prefix)) + "/fallback/";
      if (auto f = by_route_.find(fallback); f != by_route_.end()) out.push_back(f->second);
    }
  } else if (prefix.ends_with("/*/") && prefix.find('*') == prefix.size() - 2) {
    if (auto it = by_region_.find(region_of(prefix)); it != by_region_.end()) out = it->second;
  } else {
    if (glob_matches(prefix, default_prefix_)) out.push_back(default_);
    for (const auto& [p, at] : prefixes_) {
      if (glob_matches(prefix, p) && std::find(out.begin(), out.end(), at) == out.end()) out.push_back(at);
    }
  }
  if (out.empty() && invalid_to_default_) out.push_back(default_);
  return out;
}

std::vector<const route*> routing_prefix_route::targets_for(const protocol::request& req) const {
  std::vector<const route*> out;
  const std::string_view key = req.key();
  for (const std::size_t at : pick(key.substr(0, req.meta_key_binary ? 0 : prefix_length(key)))) {
    out.push_back(targets_[at]);
  }
  return out;
}

void routing_prefix_route::walk_handles(const protocol::request& req, handle_walk& w) const {
  protocol::request rest = req;
  if (const std::size_t n = prefix_taken_off(req); n > 0) {
    rest.routing_prefix = req.key().substr(0, n);
    rest.keys.set(0, req.key().substr(n));
  }
  for (const route* t : targets_for(req)) w.same_level(*t, rest);
}

void routing_prefix_route::send_copies(const protocol::request& req, const index_list& to, dispatch_env& env) const {
  for (std::size_t i = 1; i < to.size(); ++i) {
    if (env.async != nullptr && env.async->send(*targets_[to[i]], req)) {
      route_counters::add(counters().async_sent);
    } else {
      route_counters::add(counters().async_dropped);
    }
  }
}

dispatch_status routing_prefix_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  protocol::request& req = slot.req;
  if (req.cmd == protocol::command::FlushAll && !flush_pools_.empty()) return dispatch_flush(slot, env, flush_pools_);
  if (req.keys.size() > 1 && protocol::is_multikey_retrieval(req)) return split_keys(slot, env);
  const std::string_view key = req.key();
  const std::size_t len = req.meta_key_binary ? 0 : prefix_length(key);
  // A key without a prefix (most traffic): the default route, nothing to
  // pick, copy or put back.
  if (len == 0) return targets_[default_]->dispatch(slot, env);
  const index_list to = pick(key.substr(0, len));
  if (to.empty()) {
    slot.result.prepare(req);
    slot.result.outcome = protocol::routed_outcome::Refused;
    slot.result.text = std::string(kNoRoute);
    slot.result.bstatus = protocol::binary_status::InternalError;
    return dispatch_status::Pending;  // no calls: ready at once, in order
  }
  // Off the key until the reply (resume() puts it back).
  req.routing_prefix = key.substr(0, len);
  req.keys.set(0, key.substr(len));
  slot.push_frame(slot_frame{this, 0, 0, static_cast<std::int64_t>(len)});
  if (protocol::modifies(req)) send_copies(req, to, env);
  dispatch_child(*targets_[to[0]], slot, env);
  return dispatch_status::Pending;
}

// Keys grouped by (route, prefix), one child request each; a key with no
// route is a miss (counted as failed, as a key whose server failed).
dispatch_status routing_prefix_route::split_keys(request_slot& slot, dispatch_env& env) const {
  const protocol::request& req = slot.req;
  slot.result.prepare(req);
  slot.push_frame(slot_frame{this, 1, 0, 0});
  struct group {
    std::size_t target;
    std::string_view prefix;
    request_slot* child;
  };
  std::vector<group> groups;
  for (std::size_t i = 0; i < req.keys.size(); ++i) {
    const std::string_view key = req.keys[i];
    const std::size_t len = req.meta_key_binary ? 0 : prefix_length(key);
    const index_list to = pick(key.substr(0, len));
    if (to.empty()) {
      slot.result.set_failed(i, true);
      ++slot.result.failed_keys;
      continue;
    }
    const std::string_view prefix = key.substr(0, len);
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const group& x) { return x.target == to[0] && x.prefix == prefix; });
    if (g == groups.end()) {
      request_slot& c = slot.child(groups.size());
      c.req.keys.clear();
      c.key_map.clear();
      c.req.routing_prefix = prefix;
      groups.push_back(group{to[0], prefix, &c});
      g = groups.end() - 1;
    }
    g->child->req.keys.push_back(key.substr(len));
    g->child->key_map.push_back(static_cast<std::uint32_t>(i));
  }
  for (const group& g : groups) {
    slot.add_call();  // the child's answer, as one call of this slot
    dispatch_child(*targets_[g.target], *g.child, env);
  }
  return dispatch_status::Pending;
}

dispatch_status routing_prefix_route::resume(request_slot& slot, dispatch_env&) const {
  slot_frame& frame = slot.top_frame();
  if (frame.state == 1) {
    for (std::size_t i = 0; i < slot.children_in_use(); ++i) {
      request_slot& c = slot.child_at(i);
      merge_hits(slot.result, c.result, c.key_map);
    }
  } else {
    // The client's key again, as it sent it.
    const auto len = static_cast<std::size_t>(frame.saved);
    const std::string_view key = slot.req.key();
    slot.req.keys.set(0, std::string_view(key.data() - len, key.size() + len));
    slot.req.routing_prefix = {};
  }
  // The servers saw other keys than the client's: no VALUE line as they wrote it.
  slot.result.forget_raw_pieces();
  return dispatch_status::Done;
}

// ---- the kind: options, how the config formats spell them, build.

struct routing_prefix_options final : config::route_options {
  // Per child (role "route"), in order: its routing prefixes (mcrouter's aliases).
  std::vector<std::vector<std::string>> aliases;
  std::string default_route;  // "": router.default_route (--route-prefix), else the first route's first prefix
  bool send_invalid_route_to_default = false;
  bool flush_all_pools = false;  // flush_all to every pool's servers (mcrouter's ProxyRoute)
};

// mcrouter's RoutingPrefix: a leading and a trailing slash added if missing,
// then "/region/cluster/" with neither part empty.
bool normalize_prefix(std::string& p) {
  if (p.empty()) return false;
  if (p.front() != '/') p.insert(p.begin(), '/');
  if (p.back() != '/') p.push_back('/');
  const std::size_t mid = p.find('/', 1);
  return mid != std::string::npos && mid > 1 && mid + 1 < p.size() - 1 && p.find('/', mid + 1) == p.size() - 1;
}

// YAML `routes: {PREFIX: ROUTE, ...}` or a list of `{aliases: [PREFIX, ...],
// route: ROUTE}`; mcrouter's top-level `routes` takes the same two forms.
void read_routing_routes(config::route_kind_reader& in, const char* key, config::route_config& r,
                         config::route_options& opts) {
  auto& o = static_cast<routing_prefix_options&>(opts);
  const YAML::Node& v = *in.value(key);
  std::vector<std::string> seen;
  auto add = [&](const YAML::Node& at, std::vector<std::string> prefixes, const YAML::Node& route) {
    for (std::string& p : prefixes) {
      if (!normalize_prefix(p)) {
        in.fail_node(at, "Routing prefix (" + p + ") should be of the form /region/cluster/");
        return;
      }
      if (std::find(seen.begin(), seen.end(), p) != seen.end()) {
        in.fail_node(at, "routes: the routing prefix " + p + " is given twice");
        return;
      }
      seen.push_back(p);
    }
    o.aliases.push_back(std::move(prefixes));
    r.children.push_back(in.route_at(route, "route", "route"));
  };
  if (v.IsMap()) {
    for (const auto kv : v) add(kv.first, {kv.first.IsScalar() ? kv.first.Scalar() : ""}, kv.second);
  } else if (v.IsSequence()) {
    for (const YAML::Node& item : v) {
      if (!item.IsMap() || !item["route"] || !item["aliases"] || !item["aliases"].IsSequence() ||
          item["aliases"].size() == 0) {
        in.fail_node(item, "routes: each entry is an object with `aliases` (a list of routing prefixes) and `route`");
        return;
      }
      in.check_keys(item, "routes", {"aliases", "route"});
      std::vector<std::string> prefixes;
      for (const YAML::Node& a : item["aliases"]) prefixes.push_back(a.IsScalar() ? a.Scalar() : "");
      add(item, std::move(prefixes), item["route"]);
    }
  } else {
    in.fail_at(key, "routes: expected a list of {aliases, route} or an object of routing prefixes to routes, got " +
                        config::describe_node(v));
  }
}

std::string show_routing_routes(const config::route_options& opts) {
  std::string out;
  for (const auto& prefixes : static_cast<const routing_prefix_options&>(opts).aliases) {
    if (!out.empty()) out += ';';
    for (std::size_t i = 0; i < prefixes.size(); ++i) out += (i ? "," : "") + prefixes[i];
  }
  return out;
}

constexpr config::option_spec kRoutingPrefixOptions[] = {
    config::custom_option("routes", "routes", "routing prefix (/region/cluster/): route, or [{aliases, route}]",
                          read_routing_routes, show_routing_routes, "{\"/a/a/\": pool:main}",
                          "{\"/a/a/\": \"PoolRoute|main\"}", true),
    config::text_option<&routing_prefix_options::default_route>(
        "default_route", nullptr, "the prefix of keys that carry none (default: router.default_route, else the first)"),
    config::flag_option<&routing_prefix_options::send_invalid_route_to_default>(
        "send_invalid_route_to_default", nullptr, "a prefix no route has goes to the default route, not an error"),
    config::flag_option<&routing_prefix_options::flush_all_pools>(
        "flush_all_pools", "flush_all_pools",
        "flush_all goes to every server of every pool, whatever the routes (mcrouter's; its dialect sets it)"),
};

const route* build_routing_prefix(tree_builder& b, const config::route_config& r) {
  const auto& o = config::options_of<routing_prefix_options>(r);
  std::vector<const route*> targets;
  if (!b.children(r, "route", true, 1, targets)) return nullptr;
  std::vector<std::pair<std::string, std::size_t>> by_prefix;
  for (std::size_t i = 0; i < targets.size() && i < o.aliases.size(); ++i) {
    for (const std::string& p : o.aliases[i]) by_prefix.emplace_back(p, i);
  }
  std::string def = !o.default_route.empty() ? o.default_route : b.default_route();
  if (def.empty()) {
    def = by_prefix.front().first;
  } else if (!normalize_prefix(def)) {
    return b.fail(r, "default route " + def + ": a routing prefix is of the form /region/cluster/");
  }
  if (std::none_of(by_prefix.begin(), by_prefix.end(), [&](const auto& p) { return p.first == def; })) {
    return b.fail(r, "invalid default route: " + def + " (no route has it among its aliases)");
  }
  return b.add<routing_prefix_route>(b.name_of(r), std::move(targets), std::move(by_prefix), std::move(def),
                                     o.send_invalid_route_to_default || b.send_invalid_route_to_default(),
                                     o.flush_all_pools ? b.all_pools() : std::vector<std::shared_ptr<const proxy::pool>>{});
}

constexpr config::route_kind_info kRoutingPrefixInfo{
    "routing_prefix",
    "RootRoute",
    "the route of the key's routing prefix (/region/cluster/), taken off the key",
    {},
    kRoutingPrefixOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> {
      return std::make_shared<routing_prefix_options>();
    },
    config::route_kind_info::collapse::None,
    nullptr,
};

}  // namespace

extern constinit const kind_module kRoutingPrefixKind{kRoutingPrefixInfo, build_routing_prefix};

}  // namespace ithaca::route
