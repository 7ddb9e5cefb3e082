#include "mcrouter_reader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>

#include "config_file.h"
#include "jsonm_preprocessor.h"
#include "mcrouter_json.h"
#include "mcrouter_jsonm.h"
#include "mcrouter_pools.h"
#include "mcrouter_routes.h"
#include "route_check.h"

namespace ithaca::config {

namespace {

using namespace mcrouter;

// mcrouter's default routing prefix without -R (its option default_route).
constexpr std::string_view kMcrouterDefaultRoute = "/././";

// ------------------------------------------------------------ reader

// mcrouter's RouteHandleFactory: lists, short forms and named handles; each
// route type is made by the provider (mcrouter_routes.h).
class reader final : public route_factory {
 public:
  // `pool_out`: where the pools go (another config's, for a lookaside
  // client config), named `prefix` + their names; else out.pools.
  reader(load_context& ctx, router_config& out, bool expanded, std::vector<pool_config>* pool_out = nullptr,
         std::string prefix = std::string())
      : ctx_(ctx),
        out_(out),
        expanded_(expanded),
        err_(ctx),
        pools_(err_, pool_out != nullptr ? *pool_out : out.pools, out.mcrouter_server_timeout_ms),
        provider_(*this, err_, pools_, !out.mcrouter_asynclog_disable),
        pool_out_(pool_out != nullptr ? *pool_out : out.pools),
        prefix_(std::move(prefix)) {
    pools_.name_prefix(prefix_);
  }

  void read(const YAML::Node& root) {
    if (!root.IsMap()) {
      fail(root,
           "an mcrouter config is a JSON object with `pools` and `route` or `routes`, got " + describe_node(root));
      return;
    }
    // An expanded config may hold '@' and '%' (escaped ones, now plain).
    if (!expanded_) no_jsonm(root);
    if (ctx_.failed()) return;
    section keys(ctx_, "", root);  // refuses a key given twice
    for (const auto kv : root) {
      const std::string key = kv.first.Scalar();
      if (key == "pools" || key == "regional_pools" || key == "route" || key == "routes" ||
          key == "named_handles") {
        continue;
      }
      if (key == "macros" || key == "constants") {
        fail(kv.first, "`" + key +
                           "`: JSONM macros are not supported; expand the config first (mcrouter's "
                           "preprocessed config, e.g. from its __mcrouter__.config admin request)");
      } else {
        fail(kv.first, "`" + key +
                           "` is not supported by ithaca (it reads pools, regional_pools, route, routes and "
                           "named_handles)");
      }
    }
    // Meta's configs keep pools that exist once per region under
    // `regional_pools` (open-source mcrouter reads only `pools` and looks any
    // other pool name up as a file it cannot find). A region's router sees
    // its own copy of each under the one name: here they are pools like the
    // others, in the same namespace (a name in both is refused).
    std::set<std::string> pool_names;
    for (const char* section_name : {"pools", "regional_pools"}) {
      const YAML::Node pools = root[section_name];
      if (!pools) continue;
      if (!pools.IsMap()) {
        fail(pools, std::string(section_name) + ": expected an object of pool names to pools, got " +
                        describe_node(pools));
        continue;
      }
      for (const auto kv : pools) {
        const std::string name = kv.first.Scalar();
        if (!pool_names.insert(name).second) {
          fail(kv.first, "pool '" + name + "' is defined in both pools and regional_pools");
          continue;
        }
        pools_.add(name, kv.second);
      }
    }
    if (const YAML::Node handles = root["named_handles"]) register_handles(handles);
    const YAML::Node route = root["route"];
    const YAML::Node routes = root["routes"];
    if (route && routes) {
      fail(routes, "both `route` and `routes` are given; mcrouter takes one of them");
    } else if (route) {
      top_of_route(route);
    } else if (routes) {
      top_of_routes(routes);
    } else {
      fail(root, "an mcrouter config needs `route` or `routes`");
    }
    // Named handles nobody used are still checked, as mcrouter builds them.
    while (!registered_.empty()) {
      auto it = registered_.begin();
      const std::string name = it->first;
      const YAML::Node json = it->second;
      named(name, json, json);
    }
    out_.format = "mcrouter";
  }

 private:
  // ---------------------------------------------------------- errors

  void fail(const YAML::Node& at, const std::string& message) { err_.fail(at, message); }
  int line(const YAML::Node& n) const { return err_.line(n); }
  void allow(const YAML::Node& json, const std::string& what, std::initializer_list<const char*> keys) {
    err_.allow(json, what, keys);
  }

  // JSONM: "@macro(...)" calls and "%var%" substitutions, anywhere.
  void no_jsonm(const YAML::Node& n) {
    if (n.IsScalar()) {
      const std::string& t = n.Scalar();
      if (t.starts_with("@")) {
        fail(n, "'" + t.substr(0, 40) + "': JSONM macros (@...) are not supported; expand the config first");
      }
      const size_t pct = t.find('%');
      if (pct != std::string::npos) {
        const size_t end = t.find('%', pct + 1);
        const std::string name = end == std::string::npos ? "" : t.substr(pct + 1, end - pct - 1);
        if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
              return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
            })) {
          fail(n, "'" + t.substr(0, 40) + "': JSONM variables (%" + name +
                      "%) are not supported; expand the config first");
        }
      }
    } else if (n.IsMap()) {
      for (const auto kv : n) {
        no_jsonm(kv.first);
        no_jsonm(kv.second);
      }
    } else if (n.IsSequence()) {
      for (const YAML::Node& item : n) no_jsonm(item);
    }
  }

  // ---------------------------------------------------------- top

  route_config top(const YAML::Node& json) {
    if (json.IsMap() && json["type"] && json["type"].Scalar() == "PrefixSelectorRoute") return prefix_selector(json);
    return one(json, "route");
  }

  // `routes`: mcrouter picks one of these by the key's routing prefix
  // (/region/cluster/): a routing_prefix node (its module:
  // route/routes/routing_prefix_route.cc), whose default route comes from
  // --route-prefix as mcrouter's from -R.
  void top_of_routes(const YAML::Node& routes) {
    YAML::Node root(YAML::NodeType::Map);
    root["routes"] = routes;
    root["flush_all_pools"] = true;  // mcrouter's ProxyRoute sends flush_all to every pool
    out_.route = provider_.module_route(*find_route_kind("routing_prefix"), root, routes);
    out_.has_route = true;
  }

  // `route`: mcrouter serves it under the default routing prefix alone (its
  // ProxyConfig maps -R's prefix, "/././" without -R, to it), so a key with
  // another prefix finds no route ("RootRoute: No rh found") as under
  // `routes`, and one with the default prefix is routed without it. So the
  // same routing_prefix node, of one route.
  void top_of_route(const YAML::Node& route) {
    route_config only = top(route);
    YAML::Node root(YAML::NodeType::Map);
    YAML::Node routes(YAML::NodeType::Map);
    routes[out_.default_route.empty() ? std::string(kMcrouterDefaultRoute) : out_.default_route] = "NullRoute";
    root["routes"] = routes;
    root["flush_all_pools"] = true;  // as top_of_routes
    out_.route = provider_.module_route(*find_route_kind("routing_prefix"), root, route);
    for (route_config& c : out_.route.children) {
      if (c.role == "route") {
        c = std::move(only);
        c.role = "route";
      }
    }
    out_.has_route = true;
  }

  // mcrouter's PrefixSelectorRoute, read only here (its module:
  // route/routes/prefix_route.cc).
  route_config prefix_selector(const YAML::Node& json) {
    return provider_.module_route(*find_mcrouter_kind("PrefixSelectorRoute"), json, json);
  }

  // ---------------------------------------------------------- route lists

  // Exactly one route where mcrouter's factory.create() wants one.
  route_config one(const YAML::Node& json, const std::string& what) override {
    std::vector<route_config> l = list(json);
    if (l.size() != 1) {
      if (!ctx_.failed()) {
        fail(json, what + ": " + std::to_string(l.size()) + " routes where one is expected");
      }
      return null_route(line(json));
    }
    return std::move(l[0]);
  }

  bool known(const YAML::Node& json) override {
    if (!json.IsScalar()) return true;
    const std::string text = json.Scalar();
    if (built_.count(text) != 0 || registered_.count(text) != 0 || building_.count(text) != 0) return true;
    return provider::knows(text.substr(0, text.find('|')));
  }

  // mcrouter's createList(): a list flattens, a string is a named handle or a
  // short form, an object is a route (named if it has a `name`).
  std::vector<route_config> list(const YAML::Node& json) override {
    err_.at(json);
    std::vector<route_config> out;
    if (json.IsSequence()) {
      for (const YAML::Node& item : json) {
        for (route_config& r : list(item)) out.push_back(std::move(r));
      }
      return out;
    }
    if (json.IsMap()) {
      const YAML::Node name = json["name"];
      if (name && name.IsScalar() && !json["type"]) {
        fail(json, "a route object needs `type`");
        return out;
      }
      if (name && name.IsScalar()) return named(name.Scalar(), json, json);
      const YAML::Node type = json["type"];
      if (!type || !type.IsScalar()) {
        fail(json, "a route object needs `type` (a string such as \"PoolRoute\")");
        return out;
      }
      return create(type.Scalar(), json, json);
    }
    if (json.IsScalar()) {
      const std::string text = json.Scalar();
      if (text.empty()) return out;  // an optional child left out
      if (built_.count(text) != 0 || registered_.count(text) != 0 || building_.count(text) != 0) {
        return named(text, YAML::Node(), json);
      }
      const size_t pipe = text.find('|');
      if (pipe != std::string::npos) {
        return create(text.substr(0, pipe), YAML::Node(text.substr(pipe + 1)), json);
      }
      return create(text, YAML::Node(YAML::NodeType::Null), json);
    }
    fail(json, "a route is an object, a string or a list, got " + describe_node(json));
    return out;
  }

  // ---------------------------------------------------------- named handles

  void register_handles(const YAML::Node& handles) {
    if (handles.IsSequence()) {
      for (const YAML::Node& h : handles) {
        if (!h.IsMap() || !h["name"] || !h["name"].IsScalar()) {
          fail(h, "named_handles: each entry of the list is a route object with a `name`");
          continue;
        }
        add_handle(h["name"].Scalar(), h);
      }
    } else if (handles.IsMap()) {
      for (const auto kv : handles) {
        const YAML::Node h = kv.second;
        if (h.IsMap() && h["name"] && h["name"].Scalar() != kv.first.Scalar()) {
          fail(h["name"], "Ambiguous RouteHandle name in object for " + kv.first.Scalar());
          continue;
        }
        add_handle(kv.first.Scalar(), h);
      }
    } else {
      fail(handles, "named_handles is " + describe_node(handles) + ", expected a list or an object");
    }
  }

  void add_handle(const std::string& name, const YAML::Node& json) {
    if (registered_.count(name) != 0) {
      fail(json, "Route handle '" + name + "' was already registered");
      return;
    }
    registered_.emplace(name, json);
  }

  // A named handle, built once: an object becomes a route under `routes:`
  // (ithaca's named routes) used through refs; a list is copied where used.
  std::vector<route_config> named(const std::string& name, YAML::Node json, const YAML::Node& at) {
    if (building_.count(name) != 0) {
      fail(at, "named handle '" + name + "' refers to itself");
      return {};
    }
    if (auto it = built_.find(name); it != built_.end()) {
      std::vector<route_config> copy = it->second;
      for (route_config& r : copy) {
        if (r.is_ref()) r.line = line(at);
      }
      return copy;
    }
    if (auto it = registered_.find(name); it != registered_.end()) {
      json.reset(it->second);
      registered_.erase(it);
    }
    building_.insert(name);
    std::vector<route_config> made;
    if (json.IsMap()) {
      const YAML::Node type = json["type"];
      if (!type || !type.IsScalar()) {
        fail(json, "named handle '" + name + "': No type field in RouteHandle json object");
      } else {
        made = create(type.Scalar(), json, json);
      }
    } else {
      made = list(json);
    }
    building_.erase(name);
    if (json.IsMap() && made.size() == 1 && !made[0].is_ref()) {
      route_config body = std::move(made[0]);
      body.name = name;
      body.role.clear();
      out_.named_routes.push_back(std::move(body));
      made = {ref_node(name, line(at))};
    }
    built_[name] = made;
    return made;
  }

  std::vector<route_config> create(const std::string& type, const YAML::Node& json, const YAML::Node& at) {
    return provider_.create(type, json, at);
  }

  // ---------------------------------------------------------- lookaside

  // Reads a flavor's or client config's JSON text (comments allowed; no
  // JSONM) into `root`; false with *why.
  static bool lookaside_json(const std::string& text, YAML::Node& root, std::string* why) {
    if (jsonm::may_use_jsonm(text)) {
      *why = "JSONM (macros, @ or %) is not supported in a lookaside's flavor or client config";
      return false;
    }
    std::string json;
    int line = 0;
    if (!blank_json_comments(text, json, &line, why)) {
      *why = "line " + std::to_string(line) + ": " + *why;
      return false;
    }
    try {
      root.reset(YAML::Load(json));
    } catch (const YAML::Exception& e) {
      *why = e.msg;
      return false;
    }
    return true;
  }

  // mcrouter's flavor file: {"options": {"config": "file:PATH" or the JSON,
  // "server_timeout_ms": ..., ...}}; its client config, read as a config of
  // its own into a scratch router_config whose pools go to this one's,
  // named "lookasideN." + their names. One per flavor file, shared by every
  // route naming it (as mcrouter shares one client router per flavor).
  bool lookaside_client(const std::string& flavor, const YAML::Node& at, route_config& out) override {
    const std::string what = "CarbonLookasideRoute: flavor '" + flavor + "'";
    if (!flavor.starts_with("file:")) {
      fail(at, what + ": ithaca reads a flavor from a file (\"flavor\": \"file:PATH\"), not by name");
      return false;
    }
    const std::string path = flavor.substr(5);
    if (auto it = lookasides_.find(path); it != lookasides_.end()) {
      out = it->second;
      out.line = line(at);
      return true;
    }
    std::string text, why;
    YAML::Node root;
    if (!read_config_file(path, text, &why) || !lookaside_json(text, root, &why)) {
      fail(at, what + ": " + why);
      return false;
    }
    ctx_.add_source(path);
    const YAML::Node options = root.IsMap() ? root["options"] : YAML::Node();
    const YAML::Node config = options && options.IsMap() ? options["config"] : YAML::Node();
    if (!config || !config.IsScalar()) {
      fail(at, what + ": its options have no \"config\" (the lookaside's client config: file:PATH or JSON)");
      return false;
    }
    std::string client_file = path;
    std::string client = config.Scalar();
    if (client.starts_with("file:")) {
      client_file = client.substr(5);
      if (!read_config_file(client_file, client, &why)) {
        fail(at, what + ": " + why);
        return false;
      }
      ctx_.add_source(client_file);
    }
    YAML::Node client_root;
    if (!lookaside_json(client, client_root, &why)) {
      fail(at, what + ": " + client_file + ": " + why);
      return false;
    }
    router_config scratch;
    scratch.mcrouter_server_timeout_ms = out_.mcrouter_server_timeout_ms;
    if (const YAML::Node t = options["server_timeout_ms"]) {
      std::uint64_t ms = 0;
      if (t.IsScalar() && parse_unsigned(t.Scalar(), ms) && ms > 0) scratch.mcrouter_server_timeout_ms = ms;
    }
    load_context sub(client_file);
    reader(sub, scratch, false, &pool_out_, prefix_ + "lookaside" + std::to_string(lookasides_.size() + 1) + ".")
        .read(client_root);
    if (sub.failed()) {
      fail(at, what + ": " + sub.error());
      return false;
    }
    if (!scratch.named_routes.empty()) {
      fail(at, what + ": named_handles in a lookaside's client config are not supported by ithaca");
      return false;
    }
    out = std::move(scratch.route);
    out.line = line(at);
    lookasides_.emplace(path, out);
    return true;
  }

  load_context& ctx_;
  router_config& out_;
  bool expanded_;  // the text came out of the preprocessor
  json_errors err_;
  pools pools_;
  provider provider_;
  std::map<std::string, YAML::Node> registered_;  // named handles not yet built
  std::set<std::string> building_;
  std::map<std::string, std::vector<route_config>> built_;
  std::vector<pool_config>& pool_out_;
  std::string prefix_;                              // of this config's pool names ("" at the top)
  std::map<std::string, route_config> lookasides_;  // a flavor file's client route, by path
};

}  // namespace

void read_mcrouter_config(const std::string& source, load_context& ctx, config& c) {
  // mcrouter's preprocessor, when the config may use it; a config that
  // cannot (no macros, consts, '@' or '%') is read as it is. The expanded
  // JSON is read as a file would be, its errors mapped back to the lines
  // of the file (each value's line, jsonm_preprocessor.h).
  std::string expanded;
  const bool use_jsonm = jsonm::may_use_jsonm(source);
  if (use_jsonm) {
    jsonm::value v;
    std::string message;
    int line = 0;
    // The command line's part is in `c` already (make_config, cli.h).
    const mcrouter_params params{c.server.workers, c.router.default_route, c.router.config_params};
    std::vector<std::string> imported;
    const bool expanded_ok = mcrouter_expand(source, ctx.file(), params, v, &message, &line, &imported);
    // Watched with the config (config::sources; server/config_watch.h).
    for (std::string& file : imported) ctx.add_source(std::move(file));
    if (!expanded_ok) {
      if (line > 0) {
        YAML::Mark m;
        m.line = line - 1;
        ctx.fail(m, message);
      } else {
        ctx.fail(message);
      }
      return;
    }
    std::vector<int> lines;
    expanded = jsonm::to_json_with_lines(v, lines);
    ctx.map_lines(std::move(lines));
  }
  const std::string& text = use_jsonm ? expanded : source;
  std::string json;
  int line = 0;
  std::string why;
  if (!blank_json_comments(text, json, &line, &why)) {
    YAML::Mark m;
    m.line = line - 1;
    ctx.fail(m, why);
    return;
  }
  YAML::Node root;
  try {
    root.reset(YAML::Load(json));
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) {
      ctx.fail(e.msg);
    } else {
      ctx.fail(e.mark, e.msg);
    }
    return;
  }
  try {
    reader(ctx, c.router, use_jsonm).read(root);
  } catch (const YAML::Exception& e) {  // a subscript of a node of the wrong shape
    if (e.mark.is_null()) {
      ctx.fail(e.msg);
    } else {
      ctx.fail(e.mark, e.msg);
    }
  }
  if (ctx.failed()) return;
  for (const route_problem& p : check_route_tree(c.router)) {
    YAML::Mark m;
    m.line = p.line - 1;
    ctx.fail(m, p.message);
  }
}

}  // namespace ithaca::config
