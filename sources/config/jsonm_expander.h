// The preprocessor's machinery (jsonm_preprocessor.h), shared by its two
// files: jsonm_expander.cc (contexts, macros, string calls, expansion) and
// jsonm_builtins.cc (mcrouter's built-in macros and calls). The structure is
// mcrouter's: a macro runs in a context of its own parameters whose outer
// context is the caller's; `vars` add a context; constants are expanded once,
// on first use. Internal to the config library.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jsonm_preprocessor.h"
#include "jsonm_value.h"

namespace ithaca::config::jsonm {

class expander;

// Parameters and locals of one scope. A base context (a macro's) does not
// see its outer context's names; an extended one (vars, foreach) does.
class context {
 public:
  explicit context(const expander& e, int line = 0) : exp_(e), base_(true), line_(line) {}
  context(const context& outer, bool base, int line) : exp_(outer.exp_), outer_(&outer), base_(base), line_(line) {}
  context(const context&) = delete;
  context& operator=(const context&) = delete;
  context(context&&) = default;

  const expander& exp() const { return exp_; }
  const context* outer() const { return outer_; }
  // The line of the call this context runs (for the values it makes).
  int line() const { return line_; }

  // References stay valid while the context lives (std::map nodes).
  value& add_expanded(const std::string& key, value v) { return add(key, std::move(v), state::Expanded); }
  value& add_raw(const std::string& key, value v) { return add(key, std::move(v), state::Raw); }
  value& add_lazy(const std::string& key, value v) { return add(key, std::move(v), state::Lazy); }

  // A raw (unexpanded) argument, expanded now in the caller's context.
  value expand_raw(const std::string& key);
  std::optional<value> try_expand_raw(const std::string& key);
  const value& at(const std::string& key) const;
  value take(const std::string& key);
  const value* find(std::string_view key) const;
  bool contains(std::string_view key) const;
  void lazy_expand(std::string_view key) const;

 private:
  enum class state { Dead, Raw, Expanded, Lazy };
  value& add(const std::string& key, value v, state s);

  const expander& exp_;
  const context* outer_ = nullptr;
  bool base_ = false;
  int line_ = 0;
  mutable std::map<std::string, std::pair<value, state>, std::less<>> locals_;
};

// A macro: its parameters (name, default, required) and its body.
class macro {
 public:
  using body = std::function<value(context&&)>;
  // `params`: names, or objects {name, default, optional}. auto_expand
  // false: arguments are handed over raw (@if, @and: expanded when used).
  macro(const expander& e, std::string name, const std::vector<value>& params, body f, bool auto_expand);

  // A call in a string: @name(a, b).
  value call(const std::vector<std::string_view>& args, const context& ctx, int line) const;
  // A call as an object: {"type": "name", "a": ..., "b": ...}.
  value call(value&& obj, const context& ctx) const;

 private:
  struct param {
    std::string name;
    value def;  // null: none
    bool required = true;
  };
  const expander& exp_;
  std::string name_;
  body f_;
  bool auto_expand_;
  std::vector<param> params_;
  size_t min_ = 0;
  size_t max_ = 0;
};

class expander {
 public:
  explicit expander(const options& opts);
  expander(const expander&) = delete;
  expander& operator=(const expander&) = delete;

  value run(value config);

  value expand(value json, const context& ctx) const;
  value expand_string(std::string_view str, const context& ctx, int line) const;
  value replace_params(std::string_view str, const context& ctx, int line) const;
  std::vector<std::string_view> call_params(std::string_view str) const;

  // Definitions (mcrouter's addMacro/addConst): a later one replaces.
  void add_macro(const std::string& name, const std::vector<value>& params, macro::body f, bool auto_expand = true);
  void add_const(const std::string& name, value result);
  bool has_const(std::string_view name) const { return consts_.find(name) != consts_.end(); }
  const value& const_value(std::string_view name, int line) const;

  using builtin_call = std::function<value(value&&, const context&)>;
  std::map<std::string, value, std::less<>>& import_cache() const { return import_cache_; }
  const options& opts() const { return opts_; }

 private:
  struct constant {
    std::string name;
    mutable value result;
    mutable bool expanded = false;
  };
  void add_builtins();  // jsonm_builtins.cc
  void parse_macro_defs(value macros);
  void parse_macro_def(const std::string& key, const value& def);
  void count_work() const;

  options opts_;
  std::map<std::string, std::unique_ptr<macro>, std::less<>> macros_;
  std::map<std::string, std::unique_ptr<constant>, std::less<>> consts_;
  std::map<std::string, builtin_call, std::less<>> calls_;
  mutable std::map<std::string, value, std::less<>> import_cache_;
  mutable size_t nested_left_;
  mutable uint64_t work_ = 0;
};

// mcrouter's checkLogic: throws error(message) unless `ok`.
inline void jsonm_check(bool ok, const std::string& message) {
  if (!ok) throw error(message);
}

// Runs f; an error from it gets `prefix` in front (mcrouter nests the name of
// each call and property around an error) and, if it has none, `line`.
template <class F>
value jsonm_wrap(const std::string& prefix, int line, F&& f) {
  try {
    return f();
  } catch (const error& e) {
    throw error(prefix + e.what(), e.line != 0 ? e.line : line);
  }
}

}  // namespace ithaca::config::jsonm
