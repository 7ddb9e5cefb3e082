#include "runtime_vars.h"

#include <map>
#include <memory>
#include <mutex>

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include "mcrouter_json.h"

namespace ithaca::route {

namespace {

struct runtime_registry {
  std::mutex mutex;  // leaf: guards the maps; no I/O under it
  std::map<std::string, std::unique_ptr<runtime_range>, std::less<>> slots;
  YAML::Node last;  // the last file applied (a map), for slots made later
};

runtime_registry& runtime_vars_registry() {
  static runtime_registry r;
  return r;
}

// A range [A, B] with 0 <= A <= B <= 1 into `out`; else why not.
bool runtime_range_of(const YAML::Node& v, double& lo, double& hi, std::string& why) {
  if (!v.IsSequence() || v.size() != 2) {
    why = "is not an array of two numbers";
    return false;
  }
  if (!config::mcrouter::as_number(v[0], lo) || !config::mcrouter::as_number(v[1], hi)) {
    why = "holds something other than two numbers";
    return false;
  }
  if (lo < 0 || lo > hi || hi > 1) {
    why = "is not a range within [0, 1]";
    return false;
  }
  return true;
}

// Gives `slot` the value of `name` in `vars`, if it has a valid one.
// [under the registry mutex]
void runtime_assign(const YAML::Node& vars, const std::string& name, runtime_range& slot, const std::string& file) {
  const YAML::Node v = vars[name];
  if (!v) return;
  double lo = 0, hi = 0;
  std::string why;
  if (!runtime_range_of(v, lo, hi, why)) {
    spdlog::error("runtime vars {}: {} {}; its previous value stays", file, name, why);
    return;
  }
  slot.lo.store(lo, std::memory_order_relaxed);
  slot.hi.store(hi, std::memory_order_relaxed);
  slot.set.store(true, std::memory_order_release);
}

}  // namespace

runtime_range* runtime_range_slot(std::string_view name) {
  runtime_registry& r = runtime_vars_registry();
  std::lock_guard lock(r.mutex);
  auto it = r.slots.find(name);
  if (it != r.slots.end()) return it->second.get();
  auto slot = std::make_unique<runtime_range>();
  if (r.last.IsMap()) runtime_assign(r.last, std::string(name), *slot, "(last read)");
  return r.slots.emplace(std::string(name), std::move(slot)).first->second.get();
}

bool runtime_vars_apply(std::string_view text, const std::string& file, std::string* error) {
  YAML::Node vars;
  try {
    vars = YAML::Load(std::string(text));  // JSON is YAML's flow style
  } catch (const YAML::Exception& e) {
    *error = "not JSON: " + e.msg + " (line " + std::to_string(e.mark.line + 1) + ")";
    return false;
  }
  if (!vars.IsMap()) {
    *error = "expected a JSON object of variables";
    return false;
  }
  runtime_registry& r = runtime_vars_registry();
  std::lock_guard lock(r.mutex);
  r.last.reset(vars);  // rebinds (operator= would write through the old node)
  for (auto& [name, slot] : r.slots) runtime_assign(vars, name, *slot, file);
  return true;
}

}  // namespace ithaca::route
