// mcrouter's built-in macros and calls (ConfigPreprocessor's BuiltIns), each
// with its parameters and messages: every one mcrouter has, @isLocalIp
// included (this host's addresses, from getifaddrs).
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "jsonm_expander.h"
#include "jsonm_hash.h"

namespace ithaca::config::jsonm {

namespace {

// Bounds of ithaca's own (mcrouter has none): the largest @range and the
// largest result of @merge, so that a config cannot exhaust memory.
constexpr int64_t kJsonmMaxRange = 10'000'000;
constexpr size_t kJsonmMaxMerge = 64u << 20;

value jsonm_optional_param(const char* name, bool optional) {
  value p = value::object();
  p.set("name", value::string(name));
  p.set("optional", value::boolean(optional));
  return p;
}

std::vector<value> jsonm_names(std::initializer_list<const char*> l) {
  std::vector<value> out;
  for (const char* n : l) out.push_back(value::string(n));
  return out;
}

const std::string& jsonm_str(const value& v, const std::string& what) {
  jsonm_check(v.is_string(), what + " is " + v.type_name() + ", string expected");
  return v.s;
}

// Casts (@int, @double, @str, @bool): folly's as*() errors, named.
template <class F>
value jsonm_cast(const char* to, const value& v, F&& f) {
  try {
    return f();
  } catch (const error& e) {
    const std::string why = e.what();
    const size_t nl = why.find('\n');
    throw error(std::string("Can not cast ") + v.type_name() + " to " + to + ":\n" +
                (nl == std::string::npos ? why : why.substr(nl + 1)));
  }
}

uint64_t jsonm_hash_value(const value& v, const char* who) {
  if (v.is_int()) return twang_mix64(static_cast<uint64_t>(v.i));
  if (v.is_string()) return spooky_hash64(v.s, 0);
  throw error(std::string(who) + ": can not cast " + v.type_name() + " to int or string");
}

bool jsonm_local_ip(const std::string& text) {
  unsigned char want[16];
  int family = AF_INET;
  if (inet_pton(AF_INET, text.c_str(), want) != 1) {
    family = AF_INET6;
    if (inet_pton(AF_INET6, text.c_str(), want) != 1) return false;  // not an address
  }
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) throw error(std::string("Can not enumerate local ips: ") + std::strerror(errno));
  bool found = false;
  for (ifaddrs* a = list; a != nullptr && !found; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != family) continue;
    if (family == AF_INET) {
      found = std::memcmp(&reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, want, 4) == 0;
    } else {
      found = std::memcmp(&reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr, want, 16) == 0;
    }
  }
  freeifaddrs(list);
  return found;
}

// ------------------------------------------------------------ the long forms

// {"type": "transform", "dictionary", "itemTransform", "keyTransform",
// "itemName", "keyName"}: an object's keys and items, or a list's items,
// each rewritten in a context with %key% and %item%.
value jsonm_transform(const expander& exp, value&& json, const context& ctx) {
  value* d = json.find("dictionary");
  jsonm_check(d != nullptr, "Transform: 'dictionary' not found");
  value dict = exp.expand(std::move(*d), ctx);
  jsonm_check(dict.is_object() || dict.is_array(), "Transform: dictionary is not array/object");
  if (dict.empty()) return dict;
  const value* item_transform = json.find("itemTransform");
  std::string item_name = "item";
  if (const value* n = json.find("itemName")) item_name = jsonm_str(*n, "Transform: itemName");
  std::string key_name = "key";
  if (const value* n = json.find("keyName")) key_name = jsonm_str(*n, "Transform: keyName");

  context ext(ctx, /*base=*/false, json.line);
  value& key_ref = ext.add_expanded(key_name, value::null());
  value& item_ref = ext.add_expanded(item_name, value::null());
  if (dict.is_object()) {
    const value* key_transform = json.find("keyTransform");
    value out = value::object(json.line);
    for (member& m : dict.members) {
      key_ref = value::string(m.key, m.val.line);
      item_ref = std::move(m.val);
      value new_key = key_transform ? exp.expand(*key_transform, ext) : key_ref;
      jsonm_check(new_key.is_array() || new_key.is_string(), "Transformed key is not array/string");
      if (new_key.is_array() && new_key.empty()) continue;
      value new_item = item_transform ? exp.expand(*item_transform, ext) : std::move(item_ref);
      if (new_key.is_string()) {
        out.set(new_key.s, std::move(new_item));
      } else {
        for (const value& k : new_key.items) {
          jsonm_check(k.is_string(), "Transformed key list item is not a string");
          out.set(k.s, new_item);
        }
      }
    }
    return out;
  }
  jsonm_check(item_transform != nullptr, "Transform: itemTransform is required for array");
  for (size_t k = 0; k < dict.items.size(); ++k) {
    key_ref = value::integer(static_cast<int64_t>(k), dict.items[k].line);
    item_ref = std::move(dict.items[k]);
    dict.items[k] = exp.expand(*item_transform, ext);
  }
  return dict;
}

// {"type": "process", "dictionary", "initialValue", "transform", "keyName",
// "itemName", "valueName"}: a fold over an object or a list.
value jsonm_process(const expander& exp, value&& json, const context& ctx) {
  value* d = json.find("dictionary");
  jsonm_check(d != nullptr, "Process: 'dictionary' not found");
  value dict = exp.expand(std::move(*d), ctx);
  value* init = json.find("initialValue");
  jsonm_check(init != nullptr, "Process: 'initialValue' not found");
  value acc = exp.expand(std::move(*init), ctx);
  const value* transform = json.find("transform");
  jsonm_check(transform != nullptr, "Process: 'transform' not found");
  jsonm_check(dict.is_object() || dict.is_array(), "Process: dictionary is not array/object");
  std::string item_name = "item", key_name = "key", value_name = "value";
  if (const value* n = json.find("itemName")) item_name = jsonm_str(*n, "Process: itemName");
  if (const value* n = json.find("keyName")) key_name = jsonm_str(*n, "Process: keyName");
  if (const value* n = json.find("valueName")) value_name = jsonm_str(*n, "Process: valueName");

  context ext(ctx, /*base=*/false, json.line);
  value& key_ref = ext.add_expanded(key_name, value::null());
  value& item_ref = ext.add_expanded(item_name, value::null());
  value& value_ref = ext.add_expanded(value_name, value::null());
  if (dict.is_object()) {
    for (member& m : dict.members) {
      key_ref = value::string(m.key, m.val.line);
      item_ref = std::move(m.val);
      value_ref = std::move(acc);
      acc = exp.expand(*transform, ext);
    }
  } else {
    for (size_t k = 0; k < dict.items.size(); ++k) {
      key_ref = value::integer(static_cast<int64_t>(k), dict.items[k].line);
      item_ref = std::move(dict.items[k]);
      value_ref = std::move(acc);
      acc = exp.expand(*transform, ext);
    }
  }
  return acc;
}

// {"type": "foreach", "from", "key", "item", "where", "use", "top",
// "noMatchResult"}: the entries of `from` that satisfy `where` (at most
// `top`), each turned by `use` into an object or list, merged into one.
value jsonm_foreach(const expander& exp, value&& json, const context& ctx) {
  value* f = json.find("from");
  jsonm_check(f != nullptr, "Foreach: 'from' not found");
  value from = exp.expand(std::move(*f), ctx);
  jsonm_check(from.is_object() || from.is_array(), "Foreach: from is not object/array");
  std::string item_name = "item", key_name = "key";
  if (const value* n = json.find("item")) item_name = jsonm_str(*n, "Foreach: item");
  if (const value* n = json.find("key")) key_name = jsonm_str(*n, "Foreach: key");
  size_t top = from.size();
  if (value* t = json.find("top")) {
    const value top_v = exp.expand(std::move(*t), ctx);
    jsonm_check(top_v.is_int() && top_v.i >= 0, "Foreach: top should be a non-negative integer");
    top = static_cast<size_t>(top_v.i);
  }
  const value* use = json.find("use");
  const value* where = json.find("where");

  value result;  // null until the first match
  context ext(ctx, /*base=*/false, json.line);
  value& key_ref = ext.add_expanded(key_name, value::null());
  value& item_ref = ext.add_expanded(item_name, value::null());

  auto satisfies = [&] {
    if (where == nullptr) return true;
    const value w = exp.expand(*where, ext);
    jsonm_check(w.is_bool(), "Foreach: expanded 'where' is not boolean");
    return w.b;
  };
  auto append_use = [&] {
    value u = exp.expand(*use, ext);
    if (result.is_null()) {
      jsonm_check(u.is_object() || u.is_array(), "Foreach: expanded item is not object/array");
      result = std::move(u);
    } else if (result.is_object()) {
      jsonm_check(u.is_object(), "Foreach: expanded item is not an object");
      for (member& m : u.members) result.set(std::move(m.key), std::move(m.val));
    } else {
      jsonm_check(u.is_array(), "Foreach: expanded item is not an array");
      for (value& v : u.items) result.items.push_back(std::move(v));
    }
  };

  if (from.is_array()) {
    for (size_t k = 0; k < from.items.size() && top > 0; ++k) {
      key_ref = value::integer(static_cast<int64_t>(k), from.items[k].line);
      item_ref = std::move(from.items[k]);
      if (!satisfies()) continue;
      if (use == nullptr) {
        if (result.is_null()) result = value::array(json.line);
        result.items.push_back(std::move(item_ref));
      } else {
        append_use();
      }
      --top;
    }
  } else {
    for (size_t k = 0; k < from.members.size() && top > 0; ++k) {
      member& m = from.members[k];
      key_ref = value::string(m.key, m.val.line);
      item_ref = std::move(m.val);
      if (!satisfies()) continue;
      if (use == nullptr) {
        if (result.is_null()) result = value::object(json.line);
        result.set(key_ref.s, std::move(item_ref));
      } else {
        append_use();
      }
      --top;
    }
  }
  if (result.is_null()) {
    if (value* no_match = json.find("noMatchResult")) return exp.expand(std::move(*no_match), ctx);
    return from.is_object() ? value::object(json.line) : value::array(json.line);
  }
  return result;
}

}  // namespace

void expander::add_builtins() {
  const auto int_op = [this](const char* name, int64_t (*op)(int64_t, int64_t)) {
    add_macro(name, jsonm_names({"A", "B"}), [name, op](context&& ctx) {
      const value& a = ctx.at("A");
      const value& b = ctx.at("B");
      jsonm_check(a.is_int(), std::string(name) + ": A is not an integer");
      jsonm_check(b.is_int(), std::string(name) + ": B is not an integer");
      return value::integer(op(a.i, b.i), ctx.line());
    });
  };
  const auto is_type = [this](const char* name, value_type t) {
    add_macro(name, jsonm_names({"value"}),
              [t](context&& ctx) { return value::boolean(ctx.at("value").type == t, ctx.line()); });
  };

  // @import(path[, default]): another file's JSONM, expanded once per path.
  add_macro(
      "import", {value::string("path"), jsonm_optional_param("default", true)},
      [this](context&& ctx) {
        const value path_v = ctx.expand_raw("path");
        const std::string path = jsonm_str(path_v, "import path");
        if (auto it = import_cache_.find(path); it != import_cache_.end()) return it->second;
        value result;
        try {
          if (!opts_.import) throw error("Can not read " + path + ": @import is not available here");
          value parsed = parse(opts_.import(path));
          set_lines(parsed, ctx.line());  // its lines are another file's: report the call's
          result = expand(std::move(parsed), context(*this, ctx.line()));
        } catch (const std::exception& e) {
          if (std::optional<value> def = ctx.try_expand_raw("default")) {
            import_cache_.emplace(path, *def);
            return std::move(*def);
          }
          throw error("Import '" + path + "':\n" + e.what());
        }
        return import_cache_.emplace(path, std::move(result)).first->second;
      },
      false);

  add_macro("hash", jsonm_names({"value"}), [](context&& ctx) {
    return value::integer(static_cast<int64_t>(jsonm_hash_value(ctx.at("value"), "Hash")), ctx.line());
  });

  add_macro("weightedHash", jsonm_names({"dictionary", "key"}), [](context&& ctx) {
    const value& dict = ctx.at("dictionary");
    jsonm_check(dict.is_object(), std::string("WeightedHash: dictionary is ") + dict.type_name() + ", expected object");
    const value& key = ctx.at("key");
    std::vector<std::pair<std::string_view, double>> weights;
    for (const member& m : dict.members) {
      jsonm_check(m.val.is_number(),
                  "WeightedHash: " + m.key + " weight is " + m.val.type_name() + ", expected number");
      const double w = m.val.as_double();
      jsonm_check(-0.01 <= w, "WeightedHash: " + m.key + " weight " + double_text(w) + " is negative");
      weights.emplace_back(m.key, std::max(w, 0.0));
    }
    jsonm_check(!weights.empty(), "WeightedHash: dictionary is empty");
    uint64_t key_hash = 0;
    if (key.is_int()) {
      key_hash = static_cast<uint64_t>(key.i);
    } else if (key.is_string()) {
      key_hash = spooky_hash64(key.s, 0);
    } else {
      throw error(std::string("WeightedHash: key is ") + key.type_name() + ", expected string or int");
    }
    try {
      return value::string(std::string(weights[rendezvous_pick(weights, key_hash)].first), ctx.line());
    } catch (const std::invalid_argument& e) {
      throw error(std::string("WeightedHash: failed to compute hash: ") + e.what());
    }
  });

  add_macro("int", jsonm_names({"value"}), [](context&& ctx) {
    const value& v = ctx.at("value");
    return jsonm_cast("int", v, [&] { return value::integer(v.as_int(), ctx.line()); });
  });
  add_macro("double", jsonm_names({"value"}), [](context&& ctx) {
    const value& v = ctx.at("value");
    return jsonm_cast("double", v, [&] { return value::real(v.as_double(), ctx.line()); });
  });
  add_macro("str", jsonm_names({"value"}), [](context&& ctx) {
    const value& v = ctx.at("value");
    return jsonm_cast("string", v, [&] { return value::string(v.as_string(), ctx.line()); });
  });
  add_macro("bool", jsonm_names({"value"}), [](context&& ctx) {
    const value& v = ctx.at("value");
    return jsonm_cast("boolean", v, [&] { return value::boolean(v.as_bool(), ctx.line()); });
  });

  add_macro("keys", jsonm_names({"dictionary"}), [](context&& ctx) {
    const value& d = ctx.at("dictionary");
    jsonm_check(d.is_object(), "Keys: dictionary is not object");
    value out = value::array(ctx.line());
    for (const member& m : d.members) out.items.push_back(value::string(m.key, m.val.line));
    return out;
  });
  add_macro("values", jsonm_names({"dictionary"}), [](context&& ctx) {
    const value& d = ctx.at("dictionary");
    jsonm_check(d.is_object(), "Values: dictionary is not object");
    value out = value::array(ctx.line());
    for (const member& m : d.members) out.items.push_back(m.val);
    return out;
  });

  add_macro("merge", jsonm_names({"params"}), [](context&& ctx) {
    value params = ctx.take("params");
    jsonm_check(params.is_array(), "Merge: 'params' is not array");
    jsonm_check(!params.items.empty(), "Merge: empty params");
    value res = std::move(params.items[0]);
    jsonm_check(res.is_array() || res.is_object() || res.is_string(), "Merge: first param is not array/object/string");
    for (size_t k = 1; k < params.items.size(); ++k) {
      value& p = params.items[k];
      if (res.is_array()) {
        jsonm_check(p.is_array(), "Merge: param " + std::to_string(k) + " is not an array");
        for (value& v : p.items) res.items.push_back(std::move(v));
      } else if (res.is_object()) {
        jsonm_check(p.is_object(), "Merge: param " + std::to_string(k) + " is not an object");
        for (member& m : p.members) res.set(std::move(m.key), std::move(m.val));
      } else {
        jsonm_check(p.is_string(), "Merge: param " + std::to_string(k) + " is not a string");
        res.s += p.s;
      }
      jsonm_check(res.size() <= kJsonmMaxMerge, "Merge: the result is too large");
    }
    return res;
  });

  add_macro(
      "shuffle", {value::string("dictionary"), jsonm_optional_param("seed", true)},
      [](context&& ctx) {
        value arr = ctx.expand_raw("dictionary");
        jsonm_check(arr.is_array(), "Shuffle: argument must be an array");
        if (std::optional<value> seed = ctx.try_expand_raw("seed")) {
          jsonm_check(seed->is_int() && seed->i >= 0, "Shuffle: seed must be a non-negative integer");
          std::minstd_rand engine(static_cast<uint32_t>(seed->i));
          std::shuffle(arr.items.begin(), arr.items.end(), engine);
          return arr;
        }
        static thread_local std::minstd_rand engine(std::random_device{}());
        std::shuffle(arr.items.begin(), arr.items.end(), engine);
        return arr;
      },
      false);

  add_macro(
      "select", {value::string("dictionary"), value::string("key"), jsonm_optional_param("default", true)},
      [](context&& ctx) {
        value dict = ctx.expand_raw("dictionary");
        const value key = ctx.expand_raw("key");
        jsonm_check(dict.is_object() || dict.is_array(),
                    std::string("Select: dictionary is ") + dict.type_name() + ", expected array/object");
        if (dict.is_object()) {
          jsonm_check(key.is_string(), "Select: dictionary is an object, key is not a string");
          if (value* v = dict.find(key.s)) return std::move(*v);
          if (std::optional<value> def = ctx.try_expand_raw("default")) return std::move(*def);
          throw error("Select: '" + key.s + "' not found, default not specified");
        }
        jsonm_check(key.is_int(), "Select: dictionary is an array, key is not an integer");
        int64_t id = key.i;
        if (id < 0) id += static_cast<int64_t>(dict.items.size());
        if (id >= 0 && static_cast<size_t>(id) < dict.items.size()) return std::move(dict.items[id]);
        if (std::optional<value> def = ctx.try_expand_raw("default")) return std::move(*def);
        throw error("Select: index " + std::to_string(id) + " is out of range [0, " +
                    std::to_string(dict.items.size()) + ")");
      },
      false);

  add_macro("slice", jsonm_names({"dictionary", "from", "to"}), [](context&& ctx) {
    const value& from = ctx.at("from");
    const value& to = ctx.at("to");
    value dict = ctx.take("dictionary");
    jsonm_check(dict.is_object() || dict.is_array() || dict.is_string(),
                "Slice: dictionary is not array/object/string");
    if (dict.is_object()) {
      jsonm_check(from.is_string(), "Slice: from is not a string");
      jsonm_check(to.is_string(), "Slice: to is not a string");
      value out = value::object(ctx.line());
      for (member& m : dict.members) {
        if (from.s <= m.key && m.key <= to.s) out.set(std::move(m.key), std::move(m.val));
      }
      return out;
    }
    jsonm_check(from.is_int() && to.is_int(), "Slice: from/to is not an int");
    const int64_t size = static_cast<int64_t>(dict.size());
    const int64_t first = std::max<int64_t>(0, from.i);
    const int64_t end = to.i >= size ? size : std::min(to.i + 1, size);
    if (dict.is_array()) {
      value out = value::array(ctx.line());
      for (int64_t k = first; k < end; ++k) out.items.push_back(std::move(dict.items[k]));
      return out;
    }
    return value::string(first < end ? dict.s.substr(first, end - first) : "", ctx.line());
  });

  add_macro("split", jsonm_names({"dictionary", "delim"}), [](context&& ctx) {
    const std::string& s = jsonm_str(ctx.at("dictionary"), "Split: dictionary");
    const std::string& delim = jsonm_str(ctx.at("delim"), "Split: delim");
    value out = value::array(ctx.line());
    if (delim.empty()) {  // folly::split on an empty delimiter: the whole string
      out.items.push_back(value::string(s, ctx.line()));
      return out;
    }
    size_t start = 0;
    while (true) {
      const size_t at = s.find(delim, start);
      out.items.push_back(value::string(s.substr(start, at - start), ctx.line()));
      if (at == std::string::npos) break;
      start = at + delim.size();
    }
    return out;
  });

  add_macro("set", jsonm_names({"dictionary", "key", "value"}), [](context&& ctx) {
    const value& key = ctx.at("key");
    value v = ctx.take("value");
    value dict = ctx.take("dictionary");
    jsonm_check(dict.is_object() || dict.is_array(), "Set: dictionary is not array/object");
    if (dict.is_object()) {
      jsonm_check(key.is_string(), "Set: key is not a string");
      dict.set(key.s, std::move(v));
      return dict;
    }
    jsonm_check(key.is_int(), "Set: key is not an int");
    jsonm_check(
        0 <= key.i && static_cast<size_t>(key.i) < dict.items.size(),
        "Set: key '" + std::to_string(key.i) + "' is out of range [0.." + std::to_string(dict.items.size()) + ")");
    dict.items[key.i] = std::move(v);
    return dict;
  });

  add_macro("range", jsonm_names({"from", "to"}), [](context&& ctx) {
    const value& from = ctx.at("from");
    const value& to = ctx.at("to");
    jsonm_check(from.is_int(), "Range: from is not an integer");
    jsonm_check(to.is_int(), "Range: to is not an integer");
    jsonm_check(to.i < from.i || static_cast<uint64_t>(to.i - from.i) < kJsonmMaxRange,
                "Range: more than " + std::to_string(kJsonmMaxRange) + " integers");
    value out = value::array(ctx.line());
    for (int64_t k = from.i; k <= to.i; ++k) out.items.push_back(value::integer(k, ctx.line()));
    return out;
  });

  add_macro("contains", jsonm_names({"dictionary", "key"}), [](context&& ctx) {
    const value& d = ctx.at("dictionary");
    const value& key = ctx.at("key");
    if (d.is_object()) {
      jsonm_check(key.is_string(), "Contains: dictionary is an object, key is not a string");
      return value::boolean(d.find(key.s) != nullptr, ctx.line());
    }
    if (d.is_array()) {
      return value::boolean(std::any_of(d.items.begin(), d.items.end(), [&](const value& v) { return v == key; }),
                            ctx.line());
    }
    if (d.is_string()) {
      jsonm_check(key.is_string(), "Contains: dictionary is a string, key is not a string");
      return value::boolean(d.s.find(key.s) != std::string::npos, ctx.line());
    }
    throw error(std::string("Contains: dictionary is ") + d.type_name() + ", expected object/array/string");
  });

  add_macro("empty", jsonm_names({"dictionary"}), [](context&& ctx) {
    const value& d = ctx.at("dictionary");
    jsonm_check(d.is_object() || d.is_array() || d.is_string(), "empty: dictionary is not object/array/string");
    return value::boolean(d.empty(), ctx.line());
  });
  add_macro("equals", jsonm_names({"A", "B"}),
            [](context&& ctx) { return value::boolean(ctx.at("A") == ctx.at("B"), ctx.line()); });
  is_type("isArray", value_type::Array);
  is_type("isBool", value_type::Bool);
  is_type("isInt", value_type::Int);
  is_type("isDouble", value_type::Double);
  is_type("isObject", value_type::Object);
  is_type("isString", value_type::String);
  add_macro("less", jsonm_names({"A", "B"}), [](context&& ctx) {
    const value& a = ctx.at("A");
    const value& b = ctx.at("B");
    jsonm_check(!a.is_object() && !b.is_object(), "Can not compare objects");
    return value::boolean(less(a, b), ctx.line());
  });

  int_op("bitwiseAnd", [](int64_t a, int64_t b) { return a & b; });
  int_op("bitwiseOr", [](int64_t a, int64_t b) { return a | b; });
  int_op("bitwiseXor", [](int64_t a, int64_t b) { return a ^ b; });
  // Shifts of the unsigned value, as mcrouter's (a shift of 64 or more: 0).
  int_op("bitwiseLeftShift", [](int64_t a, int64_t b) {
    return b < 0 || b > 63 ? int64_t{0} : static_cast<int64_t>(static_cast<uint64_t>(a) << b);
  });
  int_op("bitwiseRightShift", [](int64_t a, int64_t b) {
    return b < 0 || b > 63 ? int64_t{0} : static_cast<int64_t>(static_cast<uint64_t>(a) >> b);
  });
  add_macro("bitwiseNot", jsonm_names({"A"}), [](context&& ctx) {
    const value& a = ctx.at("A");
    jsonm_check(a.is_int(), "bitwiseNot: A is not an integer");
    return value::integer(~a.i, ctx.line());
  });

  // @and and @or evaluate B only when A does not decide.
  add_macro(
      "and", jsonm_names({"A", "B"}),
      [](context&& ctx) {
        const value a = ctx.expand_raw("A");
        jsonm_check(a.is_bool(), std::string("and: A is ") + a.type_name() + ", expected bool");
        if (!a.b) return value::boolean(false, ctx.line());
        const value b = ctx.expand_raw("B");
        jsonm_check(b.is_bool(), std::string("and: B is ") + b.type_name() + ", expected bool");
        return value::boolean(b.b, ctx.line());
      },
      false);
  add_macro(
      "or", jsonm_names({"A", "B"}),
      [](context&& ctx) {
        const value a = ctx.expand_raw("A");
        jsonm_check(a.is_bool(), std::string("or: A is ") + a.type_name() + ", expected bool");
        if (a.b) return value::boolean(true, ctx.line());
        const value b = ctx.expand_raw("B");
        jsonm_check(b.is_bool(), std::string("or: B is ") + b.type_name() + ", expected bool");
        return value::boolean(b.b, ctx.line());
      },
      false);
  add_macro("not", jsonm_names({"A"}), [](context&& ctx) {
    const value& a = ctx.at("A");
    jsonm_check(a.is_bool(), "not: A is not bool");
    return value::boolean(!a.b, ctx.line());
  });
  add_macro("size", jsonm_names({"dictionary"}), [](context&& ctx) {
    const value& d = ctx.at("dictionary");
    jsonm_check(d.is_object() || d.is_array() || d.is_string(), "size: dictionary is not object/array/string");
    return value::integer(static_cast<int64_t>(d.size()), ctx.line());
  });

  // Wrapping arithmetic, as int64 overflow is in practice in mcrouter.
  int_op("add", [](int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + b); });
  int_op("sub", [](int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - b); });
  int_op("mul", [](int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * b); });
  add_macro("div", jsonm_names({"A", "B"}), [](context&& ctx) {
    const value& a = ctx.at("A");
    const value& b = ctx.at("B");
    jsonm_check(a.is_int(), "div: A is not an integer");
    jsonm_check(b.is_int(), "div: B is not an integer");
    jsonm_check(b.i != 0, "div: B == 0");
    jsonm_check(!(a.i == INT64_MIN && b.i == -1), "div: overflow");
    return value::integer(a.i / b.i, ctx.line());
  });
  add_macro("mod", jsonm_names({"A", "B"}), [](context&& ctx) {
    const value& a = ctx.at("A");
    const value& b = ctx.at("B");
    jsonm_check(a.is_int(), "mod: A is not an integer");
    jsonm_check(b.is_int(), "mod: B is not an integer");
    jsonm_check(b.i != 0, "mod: B == 0");
    return value::integer(b.i == -1 ? 0 : a.i % b.i, ctx.line());
  });

  add_macro("fail", jsonm_names({"msg"}), [](context&& ctx) -> value {
    const value& msg = ctx.at("msg");
    throw error(msg.is_string() ? msg.s : to_json(msg, true));
  });

  add_macro("sort", jsonm_names({"dictionary"}), [](context&& ctx) {
    value d = ctx.take("dictionary");
    jsonm_check(d.is_array(), "sort: dictionary is not an array");
    std::stable_sort(d.items.begin(), d.items.end(), less);
    return d;
  });

  add_macro(
      "if", jsonm_names({"condition", "is_true", "is_false"}),
      [](context&& ctx) {
        const value c = ctx.expand_raw("condition");
        jsonm_check(c.is_bool(), "If: condition is not bool");
        const std::string branch = c.b ? "is_true" : "is_false";
        return jsonm_wrap("If '" + branch + "':\n", 0, [&] { return ctx.expand_raw(branch); });
      },
      false);

  add_macro("define", jsonm_names({"result"}), [](context&& ctx) { return ctx.take("result"); });

  add_macro("defined", jsonm_names({"name"}), [this](context&& ctx) {
    const std::string& name = jsonm_str(ctx.at("name"), "Defined: name");
    return value::boolean((ctx.outer() != nullptr && ctx.outer()->contains(name)) || has_const(name), ctx.line());
  });

  add_macro("isLocalIp", jsonm_names({"ip"}), [](context&& ctx) {
    return value::boolean(jsonm_local_ip(jsonm_str(ctx.at("ip"), "isLocalIp: ip")), ctx.line());
  });

  // macroDef and constDef objects stay as they are until `macros` reads them.
  calls_["macroDef"] = [](value&& json, const context&) { return std::move(json); };
  calls_["constDef"] = [](value&& json, const context&) { return std::move(json); };
  calls_["transform"] = [this](value&& json, const context& ctx) {
    return jsonm_transform(*this, std::move(json), ctx);
  };
  calls_["process"] = [this](value&& json, const context& ctx) { return jsonm_process(*this, std::move(json), ctx); };
  calls_["foreach"] = [this](value&& json, const context& ctx) { return jsonm_foreach(*this, std::move(json), ctx); };
}

}  // namespace ithaca::config::jsonm
