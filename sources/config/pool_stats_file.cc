#include "pool_stats_file.h"

#include <algorithm>

#include "config_file.h"
#include "jsonm_value.h"

namespace ithaca::config {

namespace {

// Group names are kept as 16-bit indexes on each request (request_slot).
constexpr std::size_t kMaxPoolGroups = 32767;

}  // namespace

bool parse_pool_stats(std::string_view text, std::vector<std::string>& names, std::string* error) {
  names.clear();
  jsonm::value doc;
  try {
    doc = jsonm::parse(text);
  } catch (const jsonm::error& e) {
    *error = e.line > 0 ? "line " + std::to_string(e.line) + ": " + e.what() : std::string(e.what());
    return false;
  }
  if (!doc.is_object()) {
    *error = "not a JSON object";
    return false;
  }
  const jsonm::value* list = doc.find("stats_enabled_pools");
  if (list == nullptr || !list->is_array()) {
    *error = "\"stats_enabled_pools\" must be an array of pool names";
    return false;
  }
  for (const jsonm::value& v : list->items) {
    if (!v.is_string()) {
      *error = "\"stats_enabled_pools\": every element must be a string (a pool name)";
      return false;
    }
    if (std::find(names.begin(), names.end(), v.s) != names.end()) {
      *error = "\"stats_enabled_pools\": \"" + v.s + "\" is listed twice";
      return false;
    }
    names.push_back(v.s);
  }
  if (names.size() > kMaxPoolGroups) {
    *error = "\"stats_enabled_pools\": more than " + std::to_string(kMaxPoolGroups) + " names";
    return false;
  }
  return true;
}

bool read_pool_stats_file(const std::string& path, std::vector<std::string>& names, std::string* error) {
  std::string text, why;
  if (!read_config_file(path, text, &why) || !parse_pool_stats(text, names, &why)) {
    *error = path + ": " + why;
    return false;
  }
  return true;
}

}  // namespace ithaca::config
