// The preprocessor's expansion, as mcrouter's ConfigPreprocessor does it
// (lib/config/ConfigPreprocessor.cpp): its semantics, its messages.
#include "jsonm_expander.h"

#include <cctype>

namespace ithaca::config::jsonm {

namespace {

// Bounds of ithaca's own, so that a config (or the fuzzer) cannot make the
// expansion run without end: expansion steps per config.
constexpr uint64_t kJsonmMaxWork = 20'000'000;

// A macro call's argument without its blanks, except an escaped one at the
// end ("a\ " keeps its space).
std::string_view jsonm_trim_arg(std::string_view sp) {
  while (!sp.empty() && std::isspace(static_cast<unsigned char>(sp.front()))) sp.remove_prefix(1);
  while (!sp.empty() && std::isspace(static_cast<unsigned char>(sp.back()))) {
    if (sp.size() > 1) {
      size_t slashes = 0;
      size_t k = sp.size() - 2;
      while (true) {
        if (sp[k] != '\\') break;
        ++slashes;
        if (k == 0) break;
        --k;
      }
      if (slashes > 0) {
        if (slashes % 2 == 0) sp.remove_suffix(1);
        break;
      }
    }
    sp.remove_suffix(1);
  }
  return sp;
}

// The ')' that closes the '(' at i; npos if none. Escaped brackets do not count.
size_t jsonm_matching_bracket(std::string_view s, size_t i) {
  int open = 0;
  for (; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
      continue;
    }
    if (s[i] == '(') {
      ++open;
    } else if (s[i] == ')') {
      --open;
    }
    if (open == 0) return i;
  }
  return std::string_view::npos;
}

size_t jsonm_find_unescaped(std::string_view s, char c) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
      continue;
    }
    if (s[i] == c) return i;
  }
  return std::string_view::npos;
}

// Appends `from` unescaped to `to` up to the first unescaped `c`; its
// position, or npos (also for a trailing lone backslash).
size_t jsonm_unescape_until(std::string_view from, std::string& to, char c) {
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] == '\\') {
      if (++i == from.size()) return std::string_view::npos;
      to.push_back(from[i]);
      continue;
    }
    if (from[i] == c) return i;
    to.push_back(from[i]);
  }
  return std::string_view::npos;
}

// mcrouter's NestedLimitGuard.
class jsonm_nest_guard {
 public:
  explicit jsonm_nest_guard(size_t& left) : left_(left) {
    jsonm_check(--left_ > 0, "Too many nested macros. Check for cycles.");
  }
  ~jsonm_nest_guard() { ++left_; }
  jsonm_nest_guard(const jsonm_nest_guard&) = delete;
  jsonm_nest_guard& operator=(const jsonm_nest_guard&) = delete;

 private:
  size_t& left_;
};

}  // namespace

// ------------------------------------------------------------ context

value& context::add(const std::string& key, value v, state s) {
  auto [it, inserted] = locals_.emplace(key, std::make_pair(std::move(v), s));
  jsonm_check(inserted, "'" + key + "' already exists in local scope");
  return it->second.first;
}

value context::expand_raw(const std::string& key) {
  auto& entry = locals_.find(key)->second;
  entry.second = state::Dead;
  if (outer_ != nullptr) return exp_.expand(std::move(entry.first), *outer_);
  return exp_.expand(std::move(entry.first), context(exp_, line_));
}

std::optional<value> context::try_expand_raw(const std::string& key) {
  if (locals_.find(key) == locals_.end()) return std::nullopt;
  return expand_raw(key);
}

const value& context::at(const std::string& key) const {
  auto it = locals_.find(key);
  if (it == locals_.end() || it->second.second != state::Expanded) throw error("'" + key + "' is not set");
  return it->second.first;
}

value context::take(const std::string& key) {
  auto it = locals_.find(key);
  if (it == locals_.end() || it->second.second != state::Expanded) throw error("'" + key + "' is not set");
  it->second.second = state::Dead;
  return std::move(it->second.first);
}

const value* context::find(std::string_view key) const {
  auto it = locals_.find(key);
  if (it != locals_.end()) {
    if (it->second.second == state::Lazy) lazy_expand(key);
    if (it->second.second != state::Expanded) return nullptr;
    return &it->second.first;
  }
  if (outer_ != nullptr && !base_) return outer_->find(key);
  return nullptr;
}

bool context::contains(std::string_view key) const {
  if (locals_.find(key) != locals_.end()) return true;
  if (outer_ != nullptr && !base_) return outer_->find(key) != nullptr;
  return false;
}

void context::lazy_expand(std::string_view key) const {
  auto& entry = locals_.find(key)->second;
  if (entry.second != state::Lazy) return;
  // Marked first: a variable that uses itself finds nothing, not a loop.
  entry.second = state::Dead;
  try {
    entry.first = exp_.expand(std::move(entry.first), *this);
  } catch (const error& e) {
    throw error("Variable '" + std::string(key) + "':\n" + e.what(), e.line);
  }
  entry.second = state::Expanded;
}

// ------------------------------------------------------------ macro

macro::macro(const expander& e, std::string name, const std::vector<value>& params, body f, bool auto_expand)
    : exp_(e), name_(std::move(name)), f_(std::move(f)), auto_expand_(auto_expand) {
  max_ = min_ = params.size();
  bool need_optional = false;
  for (const value& p : params) {
    bool optional = false;
    if (p.is_string()) {
      params_.push_back({p.s, value::null(), true});
    } else if (p.is_object()) {
      const value* name_of = p.find("name");
      jsonm_check(name_of != nullptr, "Macro param object: 'name' not found");
      jsonm_check(name_of->is_string(),
                  std::string("Macro param object name is ") + name_of->type_name() + ", string expected");
      const std::string& pname = name_of->s;
      const value* opt = p.find("optional");
      jsonm_check(opt == nullptr || opt->is_bool(),
                  "Incorrect definition for parameter '" + pname + "' in macro '" + name_ +
                      "'. Expected optional parameter 'optional' to be boolean, but got " +
                      (opt ? opt->type_name() : "") + "!");
      if (const value* def = p.find("default")) {
        jsonm_check(opt == nullptr || opt->b,
                    "Conflicting options provided for parameter '" + pname + "' in macro '" + name_ +
                        "'. Default was set, but the parameter is also explicitly marked as not optional.");
        optional = true;
        --min_;
        params_.push_back({pname, *def, false});
      } else if (opt != nullptr && opt->b) {
        optional = true;
        --min_;
        params_.push_back({pname, value::null(), false});
      } else {
        params_.push_back({pname, value::null(), true});
      }
    } else {
      throw error(std::string("Macro param is ") + p.type_name() + ", expected string/object", p.line);
    }
    jsonm_check(optional || !need_optional,
                "Incorrect defaults/optionals in macro " + name_ +
                    ". All params after optional/default one should also be optional or have default value");
    need_optional = need_optional || optional;
  }
}

value macro::call(const std::vector<std::string_view>& args, const context& ctx, int line) const {
  jsonm_check(min_ <= args.size(), "Too few arguments for macro " + name_ + ". Expected at least " +
                                       std::to_string(min_) + " got " + std::to_string(args.size()));
  jsonm_check(args.size() <= max_, "Too many arguments for macro " + name_ + ". Expected at most " +
                                       std::to_string(max_) + " got " + std::to_string(args.size()));
  context own(ctx, /*base=*/true, line);
  for (size_t k = 0; k < args.size(); ++k) {
    if (auto_expand_) {
      own.add_expanded(params_[k].name, exp_.expand_string(args[k], ctx, line));
    } else {
      own.add_raw(params_[k].name, value::string(std::string(args[k]), line));
    }
  }
  for (size_t k = args.size(); k < params_.size(); ++k) {
    if (!params_[k].def.is_null()) own.add_expanded(params_[k].name, params_[k].def);
  }
  return f_(std::move(own));
}

value macro::call(value&& obj, const context& ctx) const {
  context own(ctx, /*base=*/true, obj.line);
  for (const param& p : params_) {
    value* arg = obj.find(p.name);
    if (arg == nullptr) {
      jsonm_check(!p.required, "Macro call " + name_ + ": '" + p.name + "' parameter not found");
      if (!p.def.is_null()) own.add_expanded(p.name, p.def);
    } else if (auto_expand_) {
      own.add_expanded(p.name, exp_.expand(std::move(*arg), ctx));
    } else {
      own.add_raw(p.name, std::move(*arg));
    }
  }
  return f_(std::move(own));
}

// ------------------------------------------------------------ expander

expander::expander(const options& opts) : opts_(opts), nested_left_(opts.nested_limit) {
  for (const auto& [name, v] : opts_.globals) add_const(name, v);
  add_builtins();
}

void expander::add_macro(const std::string& name, const std::vector<value>& params, macro::body f, bool auto_expand) {
  macros_[name] = std::make_unique<macro>(*this, name, params, std::move(f), auto_expand);
}

void expander::add_const(const std::string& name, value result) {
  auto c = std::make_unique<constant>();
  c->name = name;
  c->result = std::move(result);
  consts_[name] = std::move(c);
}

const value& expander::const_value(std::string_view name, int line) const {
  auto it = consts_.find(name);
  if (it == consts_.end()) throw error("Param in string: '" + std::string(name) + "' not found", line);
  const constant& c = *it->second;
  if (!c.expanded) {
    try {
      c.result = expand(std::move(c.result), context(*this));
    } catch (const error& e) {
      throw error("Const '" + c.name + "':\n" + e.what(), e.line);
    }
    c.expanded = true;
  }
  return c.result;
}

void expander::count_work() const {
  jsonm_check(++work_ <= kJsonmMaxWork,
              "the expansion takes more than " + std::to_string(kJsonmMaxWork) + " steps (a runaway macro?)");
}

value expander::replace_params(std::string_view str, const context& ctx, int line) const {
  if (str.find('%') == std::string_view::npos && str.find('\\') == std::string_view::npos) {
    return value::string(std::string(str), line);
  }
  std::string buf;
  while (!str.empty()) {
    const size_t pos = jsonm_unescape_until(str, buf, '%');
    if (pos == std::string_view::npos) break;
    str.remove_prefix(pos + 1);
    std::string name;
    const size_t next = jsonm_unescape_until(str, name, '%');
    jsonm_check(next != std::string_view::npos,
                "Odd number of percent signs in string around '" + std::string(str) + "'");
    const value* local = ctx.find(name);
    const value& sub = local != nullptr ? *local : const_value(name, line);
    if (buf.empty() && next == str.size() - 1) {
      // The whole string is one parameter: it becomes its value, any type.
      value v = sub;
      v.line = line;
      return v;
    }
    jsonm_check(sub.is_string(), "Param in string '" + name + "' is not a string");
    buf += sub.s;
    str.remove_prefix(next + 1);
  }
  return value::string(std::move(buf), line);
}

std::vector<std::string_view> expander::call_params(std::string_view str) const {
  std::vector<std::string_view> out;
  while (true) {
    if (str.empty()) {
      out.emplace_back();  // @a() is a call with one, empty, argument
      break;
    }
    size_t comma = jsonm_find_unescaped(str, ',');
    if (comma == std::string_view::npos) {
      out.push_back(jsonm_trim_arg(str));
      break;
    }
    const size_t open = jsonm_find_unescaped(str.substr(0, comma), '(');
    if (open != std::string_view::npos) {
      // The first argument is a call of its own: its commas are its own.
      const size_t close = jsonm_matching_bracket(str, open);
      jsonm_check(close != std::string_view::npos, "Brackets do not match: " + std::string(str));
      if (close == str.size() - 1) {
        out.push_back(jsonm_trim_arg(str));
        break;
      }
      comma = close + 1;
      while (comma < str.size() && str[comma] != ',') ++comma;
      jsonm_check(comma != str.size(), "No comma after closing bracket");
    }
    out.push_back(jsonm_trim_arg(str.substr(0, comma)));
    str.remove_prefix(comma + 1);
  }
  return out;
}

value expander::expand_string(std::string_view str, const context& ctx, int line) const {
  jsonm_nest_guard guard(nested_left_);
  count_work();
  if (str.empty()) return value::string("", line);
  if (str[0] != '@') return replace_params(str, ctx, line);
  std::string_view name;
  std::vector<std::string_view> args;
  const size_t open = jsonm_find_unescaped(str, '(');
  if (open != std::string_view::npos) {
    jsonm_check(str.back() == ')', "No closing bracket for call '" + std::string(str) + "'");
    name = str.substr(1, open - 1);
    args = call_params(str.substr(open + 1, str.size() - open - 2));
  } else {
    name = str.substr(1);
  }
  const value subst = replace_params(name, ctx, line);
  jsonm_check(subst.is_string(), std::string("Macro name is ") + subst.type_name() + ", string expected");
  auto it = macros_.find(subst.s);
  jsonm_check(it != macros_.end(), "Macro: '" + subst.s + "' not found");
  return jsonm_wrap("Macro in string '" + subst.s + "' (line " + std::to_string(line) + "):\n", line,
                    [&] { return it->second->call(args, ctx, line); });
}

value expander::expand(value json, const context& ctx) const {
  jsonm_nest_guard guard(nested_left_);
  count_work();
  const int line = json.line;
  try {
    if (json.is_string()) return expand_string(json.s, ctx, line);
    if (json.is_array()) {
      for (size_t k = 0; k < json.items.size(); ++k) {
        value& item = json.items[k];
        const int item_line = item.line;
        item = jsonm_wrap("Array element #" + std::to_string(k) + ":\n", item_line,
                          [&] { return expand(std::move(item), ctx); });
        if (item_line != 0) item.line = item_line;  // the call site's line
      }
      return json;
    }
    if (!json.is_object()) return json;

    std::optional<context> with_vars;
    if (value* vars = json.find("vars")) {
      jsonm_check(vars->is_object(), std::string("vars is ") + vars->type_name() + ", expected object");
      with_vars.emplace(ctx, /*base=*/false, line);
      // Vars may use one another: all are added first, then expanded.
      for (member& m : vars->members) with_vars->add_lazy(m.key, std::move(m.val));
      for (const member& m : vars->members) with_vars->lazy_expand(m.key);
      json.erase("vars");
    }
    const context& local = with_vars ? *with_vars : ctx;

    if (const value* type = json.find("type")) {
      const value t = expand(*type, local);
      if (t.is_string()) {
        if (auto call = calls_.find(t.s); call != calls_.end()) {
          return jsonm_wrap("Built-in '" + t.s + "':\n", line, [&] { return call->second(std::move(json), local); });
        }
        if (auto m = macros_.find(t.s); m != macros_.end()) {
          return jsonm_wrap("Macro '" + t.s + "' (line " + std::to_string(line) + "):\n", line,
                            [&] { return m->second->call(std::move(json), local); });
        }
      }
    }

    // A plain object: its keys and values expanded.
    value out = value::object(line);
    for (member& m : json.members) {
      const int value_line = m.val.line;
      value expanded = jsonm_wrap("Raw object property '" + m.key + "':\n", value_line, [&] {
        const value key = expand_string(m.key, local, value_line);
        jsonm_check(key.is_string(), "Expanded key is not a string");
        value v = expand(std::move(m.val), local);
        if (value_line != 0) v.line = value_line;  // mcrouter's metadata: the member's own line
        out.set(key.s, std::move(v));
        return value();
      });
    }
    return out;
  } catch (const error& e) {
    if (e.line != 0 || line == 0) throw;
    throw error(e.what(), line);
  }
}

void expander::parse_macro_def(const std::string& key, const value& def) {
  jsonm_check(def.is_object(), "'" + key + "' macro definition is not an object");
  const value* type = def.find("type");
  jsonm_check(type != nullptr, "macro definition: 'type' not found");
  jsonm_check(type->is_string(), std::string("macro definition type is ") + type->type_name() + ", string expected");
  if (type->s == "macroDef") {
    const value* result = def.find("result");
    jsonm_check(result != nullptr, "Macro definition: 'result' not found");
    std::vector<value> params;
    if (const value* p = def.find("params")) {
      jsonm_check(p->is_array(), "'" + key + "' macroDef params is not an array");
      params = p->items;
    }
    value body = *result;
    add_macro(key, params, [this, body](context&& ctx) { return expand(body, ctx); });
  } else if (type->s == "constDef") {
    const value* result = def.find("result");
    jsonm_check(result != nullptr, "constDef: 'result' not found");
    add_const(key, *result);
  } else {
    throw error("Unknown macro definition type: " + type->s, def.line);
  }
}

void expander::parse_macro_defs(value jmacros) {
  const value macros = expand(std::move(jmacros), context(*this));
  jsonm_check(macros.is_object() || macros.is_array(), "config macros is not an array/object");
  if (macros.is_object()) {
    for (const member& m : macros.members) {
      jsonm_wrap("", m.val.line, [&] {
        parse_macro_def(m.key, m.val);
        return value();
      });
    }
  } else {
    for (const value& item : macros.items) parse_macro_defs(item);
  }
}

value expander::run(value config) {
  jsonm_check(config.is_object(), "config is not an object");
  if (value* m = config.find("macros")) {
    value macros = std::move(*m);
    config.erase("macros");
    jsonm_wrap("macros:\n", macros.line, [&] {
      parse_macro_defs(std::move(macros));
      return value();
    });
  }
  return expand(std::move(config), context(*this));
}

// ------------------------------------------------------------ entry points

value expand_config(value config, const options& opts) { return expander(opts).run(std::move(config)); }

value expand_config(std::string_view text, const options& opts) { return expand_config(parse(text), opts); }

bool may_use_jsonm(std::string_view text) {
  if (text.find("\"macros\"") != std::string_view::npos || text.find("\"consts\"") != std::string_view::npos) {
    return true;
  }
  // An '@' or '%' inside a string (comments may hold them harmlessly, but a
  // false positive only costs the expansion, which gives the same JSON).
  return text.find('@') != std::string_view::npos || text.find('%') != std::string_view::npos;
}

}  // namespace ithaca::config::jsonm
