// The registry of route kinds (route_kind_info.h). Filled once by the route
// layer before any config is read [main], read-only afterwards.
#include <cassert>
#include <cstdio>
#include <string>
#include <vector>

#include "route_kind_info.h"
#include "router_config.h"

namespace ithaca::config {

namespace {
std::vector<const route_kind_info*>& registry() {
  static std::vector<const route_kind_info*> kinds;
  return kinds;
}
}  // namespace

void register_route_kind(const route_kind_info& k) {
  if (find_route_kind(k.name) == &k) return;  // registered already (a second call of the route layer's)
  assert(find_route_kind(k.name) == nullptr && "two route kinds of one name");
  registry().push_back(&k);
}

std::span<const route_kind_info* const> route_kinds() { return registry(); }

const route_kind_info* find_route_kind(std::string_view name) {
  for (const route_kind_info* k : registry()) {
    if (name == k->name) return k;
  }
  return nullptr;
}

const route_kind_info* find_mcrouter_kind(std::string_view mcrouter_type) {
  for (const route_kind_info* k : registry()) {
    if (k->mcrouter != nullptr && mcrouter_type == k->mcrouter) return k;
  }
  return nullptr;
}

route_config module_node(std::string_view name, route_format format, int line,
                         std::initializer_list<std::pair<const char*, std::string>> values) {
  const route_kind_info* k = find_route_kind(name);
  assert(k != nullptr && "a module_node of a kind no module registered");
  route_config r;
  r.module = k;
  r.line = line;
  std::shared_ptr<route_options> opts = k->make_options(format);
  for (const auto& [option, value] : values) {
    for (const option_spec& o : k->options) {
      if (o.name == nullptr || std::string_view(o.name) != option) continue;
      if (o.type == option_type::Text) *static_cast<std::string*>(o.field(*opts)) = value;
      if (o.type == option_type::Flag) *static_cast<bool*>(o.field(*opts)) = value == "true";
      assert((o.type == option_type::Text || o.type == option_type::Flag) && "module_node sets Text and Flag only");
    }
  }
  r.options = std::move(opts);
  return r;
}

std::string describe_options(const route_config& r) {
  if (r.module == nullptr || !r.options) return kind_name(r);
  std::string out = r.module->name;
  // The options are read through their fields, which take a mutable object;
  // nothing is written.
  route_options& opts = const_cast<route_options&>(*r.options);
  for (const option_spec& o : r.module->options) {
    if (o.name == nullptr) continue;  // mcrouter's alone: ithaca does not use it
    const void* field = o.type == option_type::Custom ? nullptr : o.field(opts);
    out += std::string(" ") + o.name + "=";
    switch (o.type) {
      case option_type::Seconds: out += std::to_string(*static_cast<const std::uint32_t*>(field)); break;
      case option_type::Flag: out += *static_cast<const bool*>(field) ? "true" : "false"; break;
      case option_type::Choice: out += o.choices[static_cast<std::size_t>(*static_cast<const int*>(field))]; break;
      case option_type::Text: out += *static_cast<const std::string*>(field); break;
      case option_type::Custom: out += o.show(*r.options); break;
    }
  }
  return out;
}

std::string show_nothing(const route_options&) { return ""; }

void become_only_child(route_config& r) {
  route_config only = std::move(r.children.front());
  only.role.clear();
  r = std::move(only);
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

const std::string* pool_named(const route_config& r) {
  if (r.module == nullptr || !r.options) return nullptr;
  for (const option_spec& o : r.module->options) {
    if (o.names_pool) return static_cast<const std::string*>(o.field(const_cast<route_options&>(*r.options)));
  }
  return nullptr;
}

}  // namespace ithaca::config
