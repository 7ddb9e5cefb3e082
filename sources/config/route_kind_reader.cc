#include "route_kind_reader.h"

#include "yaml_section.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace ithaca::config {

const char* spelling(const option_spec& o, route_format format) {
  return format == route_format::Yaml ? o.name : o.mcrouter;
}

const char* spelling(const child_slot& s, route_format format) {
  return format == route_format::Yaml ? s.name : s.mcrouter;
}

std::string a_kind(std::string_view name) {
  // "an" before a vowel, and before a letter read by its name ("an l1l2").
  const auto letter_named = [&] {
    return name.size() > 1 && std::string_view("fhlmnrsx").find(name[0]) != std::string_view::npos && name[1] >= '0' &&
           name[1] <= '9';
  };
  const bool an =
      !name.empty() && (std::string_view("aeiou").find(name[0]) != std::string_view::npos || letter_named());
  return std::string(an ? "an " : "a ") + std::string(name) + " route";
}

bool route_kind_reader::number_in(const YAML::Node& map, const char* key, double& out, double lo, double hi,
                                  const char* expected, bool open_lo) {
  const YAML::Node v = map[key];
  if (!v) return false;
  double d = 0;
  char* end = nullptr;
  const std::string text = v.IsScalar() ? v.Scalar() : "";
  if (!text.empty()) d = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(d) || d < lo || d > hi ||
      (open_lo && d == lo)) {
    fail_node(v, std::string(key) + ": expected " + expected + ", got " + describe_node(v));
    return false;
  }
  out = d;
  return true;
}

std::string route_kind_reader::what() const {
  if (format() == route_format::Mcrouter) return kind_->mcrouter;
  return a_kind(kind_->name);
}

void route_kind_reader::read(const route_kind_info& k, route_config& r) {
  kind_ = &k;
  r.module = &k;
  for (const child_slot& slot : k.children) {
    if (const char* key = spelling(slot, format())) children(key, slot, r);
  }
  read_options(k, r);
  if (k.finish != nullptr) k.finish(*this, r);
}

void route_kind_reader::read_options(const route_kind_info& k, route_config& r) {
  kind_ = &k;
  r.module = &k;
  const route_format f = format();
  std::shared_ptr<route_options> opts = k.make_options(f);
  for (const option_spec& o : k.options) {
    const char* key = spelling(o, f);
    if (key == nullptr) continue;
    if (!has(key)) {
      if (o.required) {
        fail(f == route_format::Yaml ? what() + " needs `" + key + ":` (" + o.doc + ")" : what() + ": no " + key);
      }
      continue;
    }
    if (o.type == option_type::Custom) {
      o.read(*this, key, r, *opts);
      continue;
    }
    void* field = o.field(*opts);
    switch (o.type) {
      case option_type::Custom: break;
      case option_type::Seconds: seconds(key, *static_cast<std::uint32_t*>(field)); break;
      case option_type::Flag: flag(key, *static_cast<bool*>(field)); break;
      case option_type::Choice: choice(key, o.choices, *static_cast<int*>(field)); break;
      case option_type::Text: text(key, *static_cast<std::string*>(field)); break;
    }
  }
  r.options = std::move(opts);
}

}  // namespace ithaca::config
