#include "load_route_tree.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <span>

#include "route_kind_reader.h"

namespace ithaca::config {

namespace {

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

// Every kind's YAML name: the registered ones, in the README's order, and
// "ref" (a reference to a named route).
std::vector<std::string> kind_names() {
  std::vector<std::string> out;
  for (const route_kind_info* k : route_kinds()) {
    out.emplace_back(k->name);
    if (out.back() == "pool") out.emplace_back("ref");  // where the README lists it
  }
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
  auto has = [&](const std::vector<std::string>& keys) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  };
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
      ctx_.fail(node.Mark(),
                "a route is a mapping with `type:`, \"local\", \"pool:NAME\" or the name of a route "
                "under `routes:`, got " +
                    describe_node(node));
      return r;
    }
    const route_kind_info* module = nullptr;
    if (!kind_of(node, module)) return r;
    if (!keys_fit(node, module != nullptr ? module->name : "ref",
                  module != nullptr ? keys_of(*module) : std::vector<std::string>{})) {
      return r;
    }
    section s(ctx_, "route", node);
    s.any("type");
    s.string("name", r.name);
    if (module != nullptr) {
      kind_reader(*this, s, node).read(*module, r);
    } else if (r.name.empty()) {
      ctx_.fail(node.Mark(), "a ref route needs `name:` (a route under `routes:`)");
    }
    return r;
  }

 private:
  // "local", "pool:NAME", or a named route's name.
  void shorthand(const YAML::Node& node, route_config& r) {
    const std::string& text = node.Scalar();
    const std::string role = std::move(r.role);
    if (text == "local") {
      r = module_node("local", route_format::Yaml, r.line);
    } else if (text.starts_with("pool:")) {
      r = module_node("pool", route_format::Yaml, r.line, {{"pool", text.substr(5)}});
      if (text.size() == 5) ctx_.fail(node.Mark(), "\"pool:\" needs a pool's name after it (\"pool:main\")");
    } else if (text.empty()) {
      ctx_.fail(node.Mark(), "an empty route; write \"local\", \"pool:NAME\", a named route or a mapping with `type:`");
    } else {
      r.name = text;
    }
    r.role = role;
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
        t_.list(s_, node_, r, key, slot.role, slot.min, slot.single_ok);
      } else {
        t_.one(s_, node_, r, key, slot.role, slot.min > 0);
      }
    }
    void fail(std::string message) override { t_.ctx_.fail(node_.Mark(), std::move(message)); }
    void fail_at(const char* key, std::string message) override {
      const YAML::Mark* m = s_.key_mark(key);
      t_.ctx_.fail(m != nullptr ? *m : node_.Mark(), std::move(message));
    }
    const YAML::Node* value(const char* key) override { return s_.any(key); }
    void fail_node(const YAML::Node& at, std::string message) override { t_.ctx_.fail(at.Mark(), std::move(message)); }
    route_config route_at(const YAML::Node& n, const char* role, const char*) override { return t_.read(n, role); }
    std::vector<route_config> routes_at(const YAML::Node& n, const char* role) override {
      std::vector<route_config> out;
      if (!n.IsSequence()) {
        out.push_back(t_.read(n, role));
      } else {
        for (const YAML::Node& c : n) out.push_back(t_.read(c, role));
      }
      return out;
    }
    void check_keys(const YAML::Node& map, const std::string& what, std::initializer_list<const char*> keys) override {
      section inner(t_.ctx_, what, map);
      for (const char* k : keys) inner.any(k);
      inner.finish();
    }

   private:
    tree_reader& t_;
    section& s_;
    const YAML::Node& node_;
  };

  // The kind `type:` names (nullptr: "ref"); false, and an error, if none.
  bool kind_of(const YAML::Node& node, const route_kind_info*& module) {
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
    if (t.Scalar() == "ref") return true;
    if ((module = find_route_kind(t.Scalar())) != nullptr) return true;
    std::string hint;
    if (t.Scalar() == "PoolRoute") hint = " (mcrouter's PoolRoute is `type: pool` here)";
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
      ctx_.fail(*s.key_mark(key),
                std::string(key) + ": " + a_kind(kind_name(r)) + " needs " + need + ", got " + std::to_string(n));
    }
  }

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
      ctx_.fail(v->Mark(), std::string(key) +
                               ": expected a duration in whole seconds (10s, 5m, 1h, or 0) up to 30 "
                               "days, got " +
                               describe_node(*v) + hint);
      return false;
    }
    out = static_cast<uint32_t>(ms / 1000);
    return true;
  }

  load_context& ctx_;
};

}  // namespace

route_config read_route_node(const YAML::Node& node, load_context& ctx, std::string role) {
  return tree_reader(ctx).read(node, std::move(role));
}

}  // namespace ithaca::config
