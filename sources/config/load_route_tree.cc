#include "load_route_tree.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <span>

#include "route_kind_reader.h"

namespace ithaca::config {

namespace {

// The keys each kind takes besides `type:` and `name:`.
std::vector<std::string> keys_of(route_kind k) {
  switch (k) {
    case route_kind::Local: return {};
    case route_kind::Pool: return {"pool", "reliable_deletes"};
    case route_kind::Ref: return {};
    case route_kind::Prefix: return {"prefixes", "default"};
    case route_kind::Operation: return {"get", "set", "delete", "arithmetic", "touch", "default"};
    case route_kind::Failover: return {"children", "failover_errors", "failover_limit"};
    case route_kind::FailoverExptime:
      return {"normal", "failover", "exptime", "failover_errors", "failover_limit"};
    case route_kind::Shadow: return {"normal", "shadows"};
    case route_kind::Hash: return {"children", "hash", "distribution"};
    case route_kind::RateLimit: return {"target", "fallback", "rates", "burst"};
    case route_kind::Module: break;
  }
  return {};
}

// The YAML keys of a kind its module describes: its slots, then its options.
std::vector<std::string> keys_of(const route_kind_info& k) {
  std::vector<std::string> out;
  for (const child_slot& c : k.children) {
    if (c.name != nullptr) out.emplace_back(c.name);
  }
  for (const option_spec& o : k.options) {
    if (o.name != nullptr) out.emplace_back(o.name);
  }
  return out;
}

// The kinds not yet described by a module of their own (route_kind_info.h).
constexpr route_kind kAllKinds[] = {
    route_kind::Local,     route_kind::Pool,     route_kind::Ref,    route_kind::Prefix,
    route_kind::Operation, route_kind::Failover, route_kind::FailoverExptime, route_kind::Shadow,
    route_kind::Hash,      route_kind::RateLimit,
};

// Every kind's YAML name: those above, then the registered ones.
std::vector<std::string> kind_names() {
  std::vector<std::string> out;
  for (route_kind k : kAllKinds) out.emplace_back(to_string(k));
  for (const route_kind_info* k : route_kinds()) out.emplace_back(k->name);
  return out;
}

std::string kind_list() {
  std::string out;
  for (const std::string& n : kind_names()) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Every key some kind takes (a key another kind takes is a misplaced one,
// not a typo).
bool any_kind_takes(const std::string& key) {
  auto has = [&](const std::vector<std::string>& keys) { return std::find(keys.begin(), keys.end(), key) != keys.end(); };
  for (route_kind k : kAllKinds) {
    if (has(keys_of(k))) return true;
  }
  for (const route_kind_info* k : route_kinds()) {
    if (has(keys_of(*k))) return true;
  }
  return false;
}

std::string backquoted(const std::vector<std::string>& keys) {
  std::string out;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i != 0) out += i + 1 == keys.size() ? " and " : ", ";
    out += "`" + keys[i] + ":`";
  }
  return out;
}

// The longest exptime a route takes: memcached reads a larger one as a
// point in time, not a TTL.
constexpr uint64_t kMaxExptimeSeconds = 30 * 24 * 3600;

class tree_reader {
 public:
  explicit tree_reader(load_context& ctx) : ctx_(ctx) {}

  route_config read(const YAML::Node& node, std::string role) {
    route_config r;
    r.role = std::move(role);
    r.line = node.Mark().line + 1;
    if (node.IsScalar()) {
      shorthand(node, r);
      return r;
    }
    if (!node.IsMap()) {
      ctx_.fail(node.Mark(), "a route is a mapping with `type:`, \"local\", \"pool:NAME\" or the name of a route "
                             "under `routes:`, got " + describe_node(node));
      return r;
    }
    const route_kind_info* module = nullptr;
    if (!kind_of(node, r, module)) return r;
    if (!keys_fit(node, module != nullptr ? module->name : to_string(r.kind),
                  module != nullptr ? keys_of(*module) : keys_of(r.kind))) {
      return r;
    }
    section s(ctx_, "route", node);
    s.any("type");
    s.string("name", r.name);
    if (module != nullptr) {
      kind_reader(*this, s, node).read(*module, r);
    } else {
      body(s, node, r);
    }
    return r;
  }

 private:
  // "local", "pool:NAME", or a named route's name.
  void shorthand(const YAML::Node& node, route_config& r) {
    const std::string& text = node.Scalar();
    if (text == "local") {
      r.kind = route_kind::Local;
    } else if (text.starts_with("pool:")) {
      r.kind = route_kind::Pool;
      r.pool = text.substr(5);
      if (r.pool.empty()) ctx_.fail(node.Mark(), "\"pool:\" needs a pool's name after it (\"pool:main\")");
    } else if (text.empty()) {
      ctx_.fail(node.Mark(), "an empty route; write \"local\", \"pool:NAME\", a named route or a mapping with `type:`");
    } else {
      r.kind = route_kind::Ref;
      r.name = text;
    }
  }

  // A registered kind's node, read through the description its module
  // gives (route_kind_reader.h): YAML's spellings and messages.
  class kind_reader final : public route_kind_reader {
   public:
    kind_reader(tree_reader& t, section& s, const YAML::Node& node) : t_(t), s_(s), node_(node) {}
    route_format format() const override { return route_format::Yaml; }
    bool has(const char* key) override { return s_.key_mark(key) != nullptr; }
    bool seconds(const char* key, std::uint32_t& out) override { return t_.seconds(s_, key, out); }
    bool flag(const char* key, bool& out) override { return s_.boolean(key, out); }
    bool choice(const char* key, std::span<const char* const> names, int& out) override {
      const std::vector<std::string> all(names.begin(), names.end());
      std::size_t index = 0;
      if (!s_.choice_index(key, all, index)) return false;
      out = static_cast<int>(index);
      return true;
    }
    bool text(const char* key, std::string& out) override {
      if (!has(key)) return false;
      s_.string(key, out);
      return true;
    }
    void children(const char* key, const child_slot& slot, route_config& r) override {
      if (slot.list) {
        t_.list(s_, node_, r, key, slot.role, slot.min);
      } else {
        t_.one(s_, node_, r, key, slot.role, slot.min > 0);
      }
    }
    void fail(std::string message) override { t_.ctx_.fail(node_.Mark(), std::move(message)); }
    void fail_at(const char* key, std::string message) override {
      const YAML::Mark* m = s_.key_mark(key);
      t_.ctx_.fail(m != nullptr ? *m : node_.Mark(), std::move(message));
    }

   private:
    tree_reader& t_;
    section& s_;
    const YAML::Node& node_;
  };

  bool kind_of(const YAML::Node& node, route_config& r, const route_kind_info*& module) {
    const YAML::Node t = node["type"];
    if (!t) {
      ctx_.fail(node.Mark(), "a route needs `type:` (" + kind_list() + ")");
      return false;
    }
    if (t.IsNull()) {  // `type: null` is YAML's null, and our null route
      module = find_route_kind("null");
      return module != nullptr;
    }
    if (!t.IsScalar()) {
      ctx_.fail(t.Mark(), "type: expected a route type, got " + describe_node(t));
      return false;
    }
    if (route_kind_from_string(t.Scalar(), r.kind)) return true;
    if ((module = find_route_kind(t.Scalar())) != nullptr) return true;
    std::string hint;
    for (route_kind k : kAllKinds) {
      if (t.Scalar() == mcrouter_name(k)) hint = " (mcrouter's " + t.Scalar() + " is `type: " + to_string(k) + "` here)";
    }
    if (const route_kind_info* k = find_mcrouter_kind(t.Scalar())) {
      hint = " (mcrouter's " + t.Scalar() + " is `type: " + k->name + "` here)";
    }
    if (hint.empty()) {
      const std::string close = closest_key(t.Scalar(), kind_names());
      hint = close.empty() ? " (types: " + kind_list() + ")" : " (did you mean '" + close + "'?)";
    }
    ctx_.fail(t.Mark(), "unknown route type '" + t.Scalar() + "'" + hint);
    return false;
  }

  // A key another kind takes is a child or option this kind does not have;
  // any other key is a typo.
  bool keys_fit(const YAML::Node& node, const std::string& kind_name, const std::vector<std::string>& takes) {
    std::vector<std::string> own = takes;
    own.insert(own.end(), {"type", "name"});
    bool ok = true;
    for (const auto kv : node) {
      if (!kv.first.IsScalar()) continue;  // section reports it
      const std::string& key = kv.first.Scalar();
      if (std::find(own.begin(), own.end(), key) != own.end()) continue;
      std::string message;
      if (any_kind_takes(key)) {
        message = a_kind(kind_name) + " takes no `" + key + ":`" +
                  (takes.empty() ? std::string(" (it takes nothing but `type:` and `name:`)")
                                 : " (it takes " + backquoted(takes) + ")");
      } else {
        const std::string close = closest_key(key, own);
        message = "unknown key '" + key + "' in " + a_kind(kind_name) +
                  (close.empty() ? std::string() : " (did you mean '" + close + "'?)");
      }
      ctx_.fail(kv.first.Mark(), message);
      ok = false;
    }
    return ok;
  }

  // Reads the keys of one route node's kind (its options and its children by
  // role) into `r`, after `type:` chose the kind. One switch over every kind:
  // adding a kind is one case here, the key table above and the builder's case.
  // [the thread loading the config: main at start-up, a blocking-pool thread at
  // SIGHUP; no lock] Errors go to ctx_ with the node's line; children recurse
  // through list()/one(), so the depth is the file's (at most 1 MiB of it).
  void body(section& s, const YAML::Node& node, route_config& r) {
    switch (r.kind) {
      case route_kind::Local:
      case route_kind::Module: break;
      case route_kind::Pool:
        s.string("pool", r.pool);
        s.boolean("reliable_deletes", r.reliable_deletes);
        if (r.pool.empty()) ctx_.fail(node.Mark(), "a pool route needs `pool:` (the name of a pool under `pools:`)");
        break;
      case route_kind::Ref:
        if (r.name.empty()) ctx_.fail(node.Mark(), "a ref route needs `name:` (a route under `routes:`)");
        break;
      case route_kind::Prefix: prefix(s, node, r); break;
      case route_kind::Operation: operation(s, node, r); break;
      case route_kind::Failover:
        list(s, node, r, "children", "", 2);
        failover_options(s, r);
        break;
      case route_kind::FailoverExptime:
        one(s, node, r, "normal", "normal", true);
        list(s, node, r, "failover", "failover", 1, true);
        r.exptime = 10;
        exptime(s, r);
        failover_options(s, r);
        break;
      case route_kind::Hash:
        list(s, node, r, "children", "", 1);
        s.choice("hash", r.hash);
        // Only distributions that need nothing but the number of children.
        s.choice("distribution", r.dist,
                 {kinds::distribution_kind::Ch3, kinds::distribution_kind::McrouterCrc32,
                  kinds::distribution_kind::Modula, kinds::distribution_kind::Jump});
        break;
      case route_kind::Shadow:
        one(s, node, r, "normal", "normal", true);
        shadows(s, node, r);
        break;
      case route_kind::RateLimit: rate_limit(s, node, r); break;
    }
  }

  // One child route under `key`; `required` records an error when absent.
  void one(section& s, const YAML::Node& node, route_config& r, const char* key, const char* role, bool required) {
    const YAML::Node* child = s.any(key);
    if (child == nullptr) {
      if (required) ctx_.fail(node.Mark(), a_kind(kind_name(r)) + " needs `" + key + ":` (a route)");
      return;
    }
    r.children.push_back(read(*child, role));
  }

  // A list of child routes under `key`, at least `min` of them. With
  // `single_ok`, one route without a list is a list of one.
  void list(section& s, const YAML::Node& node, route_config& r, const char* key, const char* role, size_t min,
            bool single_ok = false) {
    const YAML::Node* children = s.any(key);
    const std::string need = std::string(min == 1 ? "at least one route" : "at least two routes");
    if (children == nullptr) {
      ctx_.fail(node.Mark(), a_kind(kind_name(r)) + " needs `" + key + ":` (a list of routes, " + need + ")");
      return;
    }
    if (single_ok && (children->IsMap() || children->IsScalar())) {
      r.children.push_back(read(*children, role));
      if (min > 1) ctx_.fail(children->Mark(), std::string(key) + ": " + a_kind(kind_name(r)) + " needs " + need);
      return;
    }
    if (!children->IsSequence()) {
      ctx_.fail(*s.key_mark(key), std::string(key) + ": expected a list of routes, got " + describe_node(*children));
      return;
    }
    size_t n = 0;
    for (const YAML::Node& child : *children) {
      r.children.push_back(read(child, role));
      ++n;
    }
    if (n < min) {
      ctx_.fail(*s.key_mark(key), std::string(key) + ": " + a_kind(kind_name(r)) + " needs " + need + ", got " +
                                      std::to_string(n));
    }
  }

  void prefix(section& s, const YAML::Node& node, route_config& r) {
    const YAML::Node* prefixes = s.any("prefixes");
    if (prefixes != nullptr) {
      if (!prefixes->IsMap()) {
        ctx_.fail(*s.key_mark("prefixes"),
                  "prefixes: expected a mapping of key prefixes to routes, got " + describe_node(*prefixes));
      } else {
        std::vector<std::string> seen;
        for (const auto kv : *prefixes) {
          const std::string match = kv.first.IsScalar() ? kv.first.Scalar() : "";
          if (std::find(seen.begin(), seen.end(), match) != seen.end()) {
            ctx_.fail(kv.first.Mark(), "prefixes: the prefix '" + match + "' is listed twice");
            continue;
          }
          seen.push_back(match);
          route_config child = read(kv.second, "prefix");
          child.match = match;
          r.children.push_back(std::move(child));
        }
      }
    }
    one(s, node, r, "default", "default", false);
    if (prefixes == nullptr && s.key_mark("default") == nullptr) {
      ctx_.fail(node.Mark(), "a prefix route needs `prefixes:` (key prefix: route) and usually `default:` "
                             "(the route of keys no prefix matches)");
    }
  }

  void operation(section& s, const YAML::Node& node, route_config& r) {
    std::vector<std::string> missing;
    for (size_t i = 0; i < kOpClasses; ++i) {
      const char* cls = to_string(static_cast<op_class>(i));
      if (s.key_mark(cls) == nullptr) missing.emplace_back(cls);
      one(s, node, r, cls, cls, false);
    }
    one(s, node, r, "default", "default", false);
    if (!missing.empty() && s.key_mark("default") == nullptr) {
      ctx_.fail(node.Mark(), "an operation route needs `default:` or a route for every class (get, set, delete, "
                             "arithmetic, touch); none for " + backquoted(missing));
    }
  }

  void failover_options(section& s, route_config& r) {
    if (const YAML::Node* errors = s.any("failover_errors")) {
      if (errors->IsMap()) {
        section per(ctx_, "failover_errors", *errors);
        for (size_t i = 0; i < kOpClasses; ++i) {
          const char* cls = to_string(static_cast<op_class>(i));
          if (const YAML::Node* l = per.any(cls)) error_names(*l, cls, r.failover_errors_by_class[i]);
        }
        per.finish();
      } else {
        error_names(*errors, "failover_errors", r.failover_errors);
      }
    }
    if (const YAML::Node* limit = s.any("failover_limit")) {
      if (!limit->IsMap()) {
        ctx_.fail(*s.key_mark("failover_limit"),
                  "failover_limit: expected {rate: R, burst: B}, got " + describe_node(*limit));
        return;
      }
      section l(ctx_, "failover_limit", *limit);
      r.failover_burst = 1000;
      if (!number(l, "rate", r.failover_rate, 0, 1, "a fraction of requests above 0, at most 1", true)) {
        if (l.key_mark("rate") == nullptr) {
          ctx_.fail(limit->Mark(), "failover_limit needs `rate:` (the share of requests that may fail over, 0 to 1)");
        }
      }
      number(l, "burst", r.failover_burst, 1, 1e12, "a number of failovers, at least 1", false);
      l.finish();
    }
  }

  void error_names(const YAML::Node& node, const std::string& where, std::vector<std::string>& out) {
    if (!node.IsSequence()) {
      ctx_.fail(node.Mark(), where + ": expected a list of error names (connect_error, timeout, tko, ...), got " +
                                 describe_node(node));
      return;
    }
    const std::vector<std::string>& known = known_failover_errors();
    for (const YAML::Node& e : node) {
      const std::string name = e.IsScalar() ? e.Scalar() : "";
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        const std::string close = closest_key(name, known);
        ctx_.fail(e.Mark(), where + ": unknown error '" + name + "'" +
                                (close.empty() ? " (mcrouter's result names: connect_error, connect_timeout, "
                                                 "timeout, tko, remote_error, busy, try_again, ...)"
                                               : " (did you mean '" + close + "'?)"));
        continue;
      }
      out.push_back(name);
    }
    if (out.empty() && node.size() == 0) ctx_.fail(node.Mark(), where + ": an empty list would never fail over");
  }

  // A number in [lo, hi] (above lo when `open_lo`). True if present and valid.
  bool number(section& s, const char* key, double& out, double lo, double hi, const char* what, bool open_lo) {
    const YAML::Node* v = s.any(key);
    if (v == nullptr) return false;
    double d = 0;
    if (!as_number(*v, d) || d < lo || d > hi || (open_lo && d == lo)) {
      ctx_.fail(v->Mark(), std::string(key) + ": expected " + what + ", got " + describe_node(*v));
      return false;
    }
    out = d;
    return true;
  }

  static bool as_number(const YAML::Node& v, double& out) {
    if (!v.IsScalar() || v.Scalar().empty()) return false;
    const std::string& t = v.Scalar();
    char* end = nullptr;
    out = std::strtod(t.c_str(), &end);
    return end == t.c_str() + t.size() && std::isfinite(out);
  }

  // `exptime:` as a duration in whole seconds (10s, 5m, 0). True if present
  // and valid (then r.exptime is set).
  bool exptime(section& s, route_config& r) { return seconds(s, "exptime", r.exptime); }

  // `key:` as a duration in whole seconds (10s, 5m, 0) up to 30 days. True
  // if present and valid (then `out` is set).
  bool seconds(section& s, const char* key, std::uint32_t& out) {
    const YAML::Node* v = s.any(key);
    if (v == nullptr) return false;
    uint64_t ms = 0;
    const std::string text = v->IsScalar() ? v->Scalar() : "";
    if (!v->IsScalar() || !parse_duration(text, ms) || ms % 1000 != 0 || ms / 1000 > kMaxExptimeSeconds) {
      uint64_t bare = 0;
      const std::string hint = parse_unsigned(text, bare) ? " (a unit is required: " + text + "s?)" : "";
      ctx_.fail(v->Mark(), std::string(key) + ": expected a duration in whole seconds (10s, 5m, 1h, or 0) up to 30 "
                               "days, got " + describe_node(*v) + hint);
      return false;
    }
    out = static_cast<uint32_t>(ms / 1000);
    return true;
  }

  void shadows(section& s, const YAML::Node& node, route_config& r) {
    const YAML::Node* list = s.any("shadows");
    if (list == nullptr) {
      ctx_.fail(node.Mark(), "a shadow route needs `shadows:` (a list of {route: ROUTE, key_fraction: [A, B], "
                             "request_fraction: F})");
      return;
    }
    if (!list->IsSequence() || list->size() == 0) {
      ctx_.fail(*s.key_mark("shadows"), "shadows: expected a list of at least one {route: ROUTE, key_fraction: "
                                        "[A, B], request_fraction: F}, got " + describe_node(*list));
      return;
    }
    for (const YAML::Node& item : *list) {
      if (!item.IsMap()) {
        ctx_.fail(item.Mark(), "shadows: each shadow is a mapping with `route:`, got " + describe_node(item));
        continue;
      }
      section sh(ctx_, "shadows", item);
      const YAML::Node* target = sh.any("route");
      if (target == nullptr) {
        ctx_.fail(item.Mark(), "a shadow needs `route:` (where the copies go)");
        sh.any("key_fraction");
        sh.any("request_fraction");
        sh.finish();
        continue;
      }
      route_config child = read(*target, "shadow");
      if (const YAML::Node* kf = sh.any("key_fraction")) {
        double lo = 0, hi = 0;
        if (!kf->IsSequence() || kf->size() != 2 || !as_number((*kf)[0], lo) || !as_number((*kf)[1], hi) ||
            lo < 0 || hi > 1 || lo > hi) {
          ctx_.fail(kf->Mark(), "key_fraction: expected [A, B] with 0 <= A <= B <= 1 (the share of the key hash "
                                "space whose keys are shadowed), got " + describe_node(*kf));
        } else {
          child.key_fraction_lo = lo;
          child.key_fraction_hi = hi;
        }
      }
      number(sh, "request_fraction", child.request_fraction, 0, 1, "a fraction from 0 to 1", false);
      sh.finish();
      r.children.push_back(std::move(child));
    }
  }

  void rate_limit(section& s, const YAML::Node& node, route_config& r) {
    one(s, node, r, "target", "target", true);
    one(s, node, r, "fallback", "fallback", false);
    const YAML::Node* rates = s.any("rates");
    if (rates == nullptr || !rates->IsMap() || rates->size() == 0) {
      ctx_.fail(rates ? rates->Mark() : node.Mark(),
                "a rate_limit route needs `rates:` (requests per second by class: get, set, delete, arithmetic, "
                "touch), got " + (rates ? describe_node(*rates) : std::string("nothing")));
      return;
    }
    section rs(ctx_, "rates", *rates);
    for (size_t i = 0; i < kOpClasses; ++i) {
      if (number(rs, to_string(static_cast<op_class>(i)), r.rate[i], 0, 1e12, "requests per second above 0", true)) {
        r.burst[i] = r.rate[i];  // mcrouter's default burst: one second's worth
      }
    }
    rs.finish();
    const YAML::Node* burst = s.any("burst");
    if (burst == nullptr) return;
    if (!burst->IsMap()) {
      ctx_.fail(*s.key_mark("burst"), "burst: expected a mapping of classes to burst sizes, got " + describe_node(*burst));
      return;
    }
    section bs(ctx_, "burst", *burst);
    for (size_t i = 0; i < kOpClasses; ++i) {
      const char* cls = to_string(static_cast<op_class>(i));
      if (number(bs, cls, r.burst[i], 1, 1e12, "a number of requests, at least 1", false) && r.rate[i] == 0) {
        ctx_.fail(*bs.key_mark(cls), std::string("burst: ") + cls + " has a burst but no rate under `rates:`");
      }
    }
    bs.finish();
  }

  load_context& ctx_;
};

}  // namespace

route_config read_route_node(const YAML::Node& node, load_context& ctx, std::string role) {
  return tree_reader(ctx).read(node, std::move(role));
}

}  // namespace ithaca::config
