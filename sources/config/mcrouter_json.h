// Reading mcrouter's JSON with yaml-cpp: values as mcrouter's folly::dynamic
// sees them (a quoted "5" is a string, not a number), and errors at the line
// of the node they are about. Internal to the mcrouter reader.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

#include "yaml_section.h"

namespace ithaca::config::mcrouter {

bool is_string(const YAML::Node& n);               // a quoted scalar
bool as_number(const YAML::Node& n, double& out);  // an unquoted finite number
bool as_int(const YAML::Node& n, int64_t& out);    // ... with no fraction
bool as_bool(const YAML::Node& n, bool& out);      // true or false, unquoted

// Errors as file:line: message. Short forms ("PoolRoute|A") make nodes with
// no position; they report at the last positioned node passed to at().
class json_errors {
 public:
  explicit json_errors(load_context& ctx) : ctx_(ctx) {}

  void fail(const YAML::Node& at, const std::string& message) { ctx_.fail(mark(at), message); }
  void fail(const YAML::Mark& m, const std::string& message) { ctx_.fail(m, message); }
  bool failed() const { return ctx_.failed(); }
  YAML::Mark mark(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    return m.is_null() ? here_ : m;
  }
  int line(const YAML::Node& n) const { return mark(n).line + 1; }
  // Remembers where we are, for the nodes short forms make.
  void at(const YAML::Node& n) {
    if (!n.Mark().is_null()) here_ = n.Mark();
  }
  // Refuses the keys of an object (a route, a pool) that are not `keys`,
  // `type` or `name`, and a key given twice: mcrouter options ithaca does not
  // read are never ignored.
  void allow(const YAML::Node& json, const std::string& what, std::span<const char* const> keys);
  void allow(const YAML::Node& json, const std::string& what, std::initializer_list<const char*> keys) {
    allow(json, what, std::span<const char* const>(keys.begin(), keys.size()));
  }

 private:
  load_context& ctx_;
  YAML::Mark here_;
};

}  // namespace ithaca::config::mcrouter
