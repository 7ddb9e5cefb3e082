#include "mcrouter_json.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "mcrouter_reader.h"

namespace ithaca::config {

bool looks_like_mcrouter_json(std::string_view text, std::string_view path) {
  std::string blanked;
  int line = 0;
  std::string why;
  if (!blank_json_comments(text, blanked, &line, &why)) {
    // Unreadable as JSON; it is JSON if it starts like JSON.
    blanked = std::string(text);
  }
  const size_t brace = blanked.find_first_not_of(" \t\r\n");
  const size_t key = brace == std::string::npos ? brace : blanked.find_first_not_of(" \t\r\n", brace + 1);
  const bool json_like =
      brace != std::string::npos && blanked[brace] == '{' && key != std::string::npos && blanked[key] == '"';
  if (!path.ends_with(".json") && !json_like) return false;
  // ithaca's own config written as JSON (JSON is YAML) names its sections.
  try {
    const YAML::Node root = YAML::Load(blanked);
    if (root.IsMap()) {
      for (const char* ithaca_only : {"listen", "server", "cache", "logging", "replication"}) {
        if (root[ithaca_only]) return false;
      }
    }
  } catch (const YAML::Exception&) {
    // The mcrouter reader reports it, at its line.
  }
  return true;
}

bool blank_json_comments(std::string_view text, std::string& out, int* line, std::string* why) {
  out.assign(text.begin(), text.end());
  int at = 1;
  auto fail = [&](int l, std::string w) {
    if (line) *line = l;
    if (why) *why = std::move(w);
    return false;
  };
  for (size_t i = 0; i < out.size(); ++i) {
    const char ch = out[i];
    if (ch == '\n') {
      ++at;
    } else if (ch == '"') {  // a string: skip to its closing quote, escapes included
      for (++i; i < out.size() && out[i] != '"'; ++i) {
        if (out[i] == '\\' && i + 1 < out.size()) ++i;
        if (out[i] == '\n') ++at;  // (an error for the parser; keep counting)
      }
    } else if (ch == '\t') {
      out[i] = ' ';
    } else if (ch == '#') {
      return fail(at,
                  "'#' outside a string (an #include?): JSON has no such thing, and mcrouter's "
                  "preprocessor features are not supported");
    } else if (ch == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      for (; i < out.size() && out[i] != '\n'; ++i) out[i] = ' ';
      if (i < out.size()) ++at;
    } else if (ch == '/' && i + 1 < out.size() && out[i + 1] == '*') {
      const int opened = at;
      out[i] = out[i + 1] = ' ';
      for (i += 2; i < out.size() && !(out[i] == '*' && i + 1 < out.size() && out[i + 1] == '/'); ++i) {
        if (out[i] == '\n') {
          ++at;
        } else {
          out[i] = ' ';
        }
      }
      if (i >= out.size()) return fail(opened, "a /* comment is never closed");
      out[i] = out[i + 1] = ' ';
      ++i;
    }
  }
  return true;
}

namespace mcrouter {

bool is_string(const YAML::Node& n) { return n.IsScalar() && n.Tag() == "!"; }

bool as_number(const YAML::Node& n, double& out) {
  if (!n.IsScalar() || is_string(n) || n.Scalar().empty()) return false;
  const std::string& t = n.Scalar();
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() && std::isfinite(out);
}

bool as_int(const YAML::Node& n, int64_t& out) {
  double d = 0;
  if (!as_number(n, d) || d != std::floor(d) || std::fabs(d) > 9e15) return false;
  out = static_cast<int64_t>(d);
  return true;
}

bool as_bool(const YAML::Node& n, bool& out) {
  if (!n.IsScalar() || is_string(n)) return false;
  if (n.Scalar() == "true") {
    out = true;
  } else if (n.Scalar() == "false") {
    out = false;
  } else {
    return false;
  }
  return true;
}

void json_errors::allow(const YAML::Node& json, const std::string& what, std::span<const char* const> keys) {
  if (!json.IsMap()) return;
  std::set<std::string> seen;
  for (const auto kv : json) {
    const std::string key = kv.first.Scalar();
    if (!seen.insert(key).second) {
      ctx_.fail(kv.first.Mark(), what + ": '" + key + "' is given twice");
      continue;
    }
    if (key == "type" || key == "name") continue;
    if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return key == k; })) {
      std::vector<std::string> known(keys.begin(), keys.end());
      const std::string close = closest_key(key, known);
      ctx_.fail(kv.first.Mark(), what + ": option '" + key + "' is not supported by ithaca" +
                                     (close.empty() ? std::string() : " (did you mean '" + close + "'?)"));
    }
  }
}

}  // namespace mcrouter

}  // namespace ithaca::config
