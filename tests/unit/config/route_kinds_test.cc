// The route kinds registered by their modules (route/route_kinds.cc), read
// through config's registry: every description is complete, and both readers
// (ithaca's YAML and mcrouter's JSON) read every kind from it alike: a node
// without a required child or option is refused by each, at its line, naming
// the key; a complete node is accepted by each with the same options. Written
// over the registry, so a new kind is checked without a new case here.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "load.h"
#include "mcrouter_root.h"
#include "route_kind.h"
#include "route_kind_info.h"

using namespace ithaca::config;

namespace {

const char* kYamlPools = "pools:\n  main: {servers: [127.0.0.1:1]}\n";                       // lines 1-2
const char* kJsonPools = "{\n  \"pools\": {\"main\": {\"servers\": [\"127.0.0.1:1\"]}},\n";  // lines 1-2

std::string kinds_load(const std::string& text, const std::string& name, config* out = nullptr) {
  config c;
  std::string error;
  const bool ok = load_config_text(text, name, c, &error);
  CHECK(ok == error.empty());
  if (out) *out = c;
  return error;
}

// A value of option `o` each format accepts, as that format spells it; ""
// for an option no value of is accepted (mcrouter's options ithaca refuses).
std::string yaml_value(const option_spec& o) {
  switch (o.type) {
    case option_type::Seconds: return "30s";
    case option_type::Flag: return "false";
    case option_type::Choice: return o.choices.back();
    case option_type::Text: return o.names_pool ? "main" : o.yaml_sample != nullptr ? o.yaml_sample : "text";
    case option_type::Custom: return o.yaml_sample != nullptr ? o.yaml_sample : "";
  }
  return "";
}
std::string json_value(const option_spec& o) {
  switch (o.type) {
    case option_type::Seconds: return "30";
    case option_type::Flag: return "false";
    case option_type::Choice: return std::string("\"") + o.choices.back() + "\"";
    case option_type::Text:
      return o.names_pool ? "\"main\"" : o.mcrouter_sample != nullptr ? o.mcrouter_sample : "\"text\"";
    case option_type::Custom: return o.mcrouter_sample != nullptr ? o.mcrouter_sample : "";
  }
  return "";
}

// A list slot's routes: two, or as many as it takes at most.
unsigned list_size(const child_slot& c) { return c.max != 0 && c.max < 2 ? c.max : 2; }
std::string yaml_list(const child_slot& c) { return list_size(c) == 1 ? "[pool:main]" : "[pool:main, pool:main]"; }
std::string json_list(const child_slot& c) {
  return list_size(c) == 1 ? "[\"PoolRoute|main\"]" : "[\"PoolRoute|main\", \"PoolRoute|main\"]";
}

// The node of kind `k` with every slot and option (but `skip`), one key per
// line from line 4 (YAML: `route:` on line 3) or line 4 (JSON: `"route": {`
// on line 3).
std::string yaml_node(const route_kind_info& k, const std::string& skip) {
  std::string out = std::string(kYamlPools) + "route:\n  type: " + k.name + "\n";
  for (const child_slot& c : k.children) {
    if (c.name == nullptr || skip == c.name) continue;
    out += std::string("  ") + c.name + ": " + (c.list ? yaml_list(c) : "pool:main") + "\n";
  }
  for (const option_spec& o : k.options) {
    if (o.name == nullptr || skip == o.name || yaml_value(o).empty()) continue;
    out += std::string("  ") + o.name + ": " + yaml_value(o) + "\n";
  }
  return out;
}
std::string json_node(const route_kind_info& k, const std::string& skip) {
  std::string out = std::string(kJsonPools) + "  \"route\": {\n    \"type\": \"" + k.mcrouter + "\"";
  for (const child_slot& c : k.children) {
    if (c.mcrouter == nullptr || skip == c.mcrouter) continue;
    out += std::string(",\n    \"") + c.mcrouter + "\": " + (c.list ? json_list(c) : "\"PoolRoute|main\"");
  }
  for (const option_spec& o : k.options) {
    if (o.mcrouter == nullptr || skip == o.mcrouter || json_value(o).empty()) continue;
    out += std::string(",\n    \"") + o.mcrouter + "\": " + json_value(o);
  }
  return out + "\n  }\n}\n";
}

}  // namespace

TEST_CASE("every registered kind is described completely, under names of its own") {
  REQUIRE(route_kinds().size() == ithaca::route::route_kinds().size());
  std::set<std::string> names, mcrouter_names;
  for (const route_kind_info* k : route_kinds()) {
    INFO(std::string(k->name));
    CHECK(names.insert(k->name).second);
    if (k->mcrouter != nullptr) CHECK(mcrouter_names.insert(k->mcrouter).second);
    CHECK(std::string(k->summary).size() > 10);
    CHECK((k->make_options != nullptr));
    for (const option_spec& o : k->options) {
      CHECK((o.name != nullptr || o.mcrouter != nullptr));
      CHECK(std::string(o.doc).size() > 10);
      // A field to fill, or (Custom) a reader of its own that shows what it read.
      CHECK(((o.field != nullptr) != (o.type == option_type::Custom)));
      if (o.type == option_type::Custom) CHECK((o.read != nullptr && o.show != nullptr));
      if (o.type == option_type::Choice) CHECK(!o.choices.empty());
    }
    const ithaca::route::kind_module* m = ithaca::route::find_route_kind(k->name);
    REQUIRE(m != nullptr);
    CHECK(&m->config == k);
    CHECK((m->build != nullptr));
    for (const ithaca::route::route_stat& st : m->stats) CHECK(std::string(st.help).size() > 10);
  }
}

TEST_CASE("both readers take a complete node of every kind, with the same options") {
  for (const route_kind_info* k : route_kinds()) {
    INFO(std::string(k->name));
    config y;
    REQUIRE(kinds_load(yaml_node(*k, ""), "t.yaml", &y) == "");
    CHECK(std::string(kind_name(y.router.route)) == k->name);
    if (k->mcrouter == nullptr) continue;
    // Options only one format has are left out of the comparison: each
    // format gets its own defaults for them.
    bool same_options = true;
    for (const option_spec& o : k->options) same_options = same_options && o.name != nullptr && o.mcrouter != nullptr;
    // An mcrouter CarbonLookasideRoute names a flavor file the reader reads
    // (its lookaside's client config; tests/functional/test_routes_carbon_lookaside.py).
    if (std::string_view(k->name) == "carbon_lookaside") {
      CHECK(kinds_load(json_node(*k, ""), "t.json").find("/etc/mcrouter/lookaside.json: ") != std::string::npos);
      continue;
    }
    config j;
    REQUIRE(kinds_load(json_node(*k, ""), "t.json", &j) == "");
    CHECK(std::string(kind_name(written_route(j))) == k->name);
    if (same_options) CHECK(describe_options(written_route(j)) == describe_options(y.router.route));
  }
}

TEST_CASE("both readers refuse a node without a required child or option, at its line, naming the key") {
  for (const route_kind_info* k : route_kinds()) {
    // YAML key, mcrouter key. mcrouter reads a list kind without children
    // as a NullRoute (makeNullOrSingletonRoute), so a list is required only
    // in YAML.
    std::vector<std::pair<const char*, const char*>> required;
    for (const child_slot& c : k->children) {
      if (c.min > 0 && (c.name != nullptr || !c.list)) required.emplace_back(c.name, c.list ? nullptr : c.mcrouter);
    }
    for (const option_spec& o : k->options) {
      if (o.required) required.emplace_back(o.name, o.mcrouter);
    }
    for (const auto& [yaml_key, json_key] : required) {
      const std::string what = std::string(k->name) + " without " + (yaml_key != nullptr ? yaml_key : json_key);
      INFO(what);
      if (yaml_key != nullptr) {
        const std::string e = kinds_load(yaml_node(*k, yaml_key), "t.yaml");
        INFO(e);
        CHECK(e.starts_with("t.yaml:4: "));
        CHECK(e.find(yaml_key) != std::string::npos);
      }
      if (json_key != nullptr && k->mcrouter != nullptr) {
        const std::string e = kinds_load(json_node(*k, json_key), "t.json");
        INFO(e);
        CHECK(e.starts_with("t.json:3: "));
        CHECK(e.find(json_key) != std::string::npos);
        CHECK(e.find(k->mcrouter) != std::string::npos);
      }
    }
  }
}
