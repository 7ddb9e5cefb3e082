#include "yaml_section.h"

#include <algorithm>

namespace ithaca::config {

namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
      diagonal = above;
    }
  }
  return row[b.size()];
}

bool before(const YAML::Mark& a, const YAML::Mark& b) {
  return a.line != b.line ? a.line < b.line : a.column < b.column;
}

std::string quote_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i != 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace

std::string closest_key(std::string_view key, const std::vector<std::string>& known) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, key.size() / 3) + 1;
  for (const std::string& k : known) {
    size_t d = edit_distance(key, k);
    if (d < best_distance) {
      best_distance = d;
      best = k;
    }
  }
  return best;
}

std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar: return "'" + node.Scalar() + "'";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return "nothing";
  }
  return "nothing";
}

void load_context::fail(const YAML::Mark& at, std::string message) {
  YAML::Mark mark = at;
  if (!line_map_.empty() && mark.line >= 0) {
    const size_t text_line = static_cast<size_t>(mark.line) + 1;
    if (text_line < line_map_.size() && line_map_[text_line] > 0) {
      mark.line = line_map_[text_line] - 1;
      mark.column = 0;
    }
  }
  if (failed_ && (!positioned_ || !before(mark, first_))) return;
  failed_ = true;
  positioned_ = true;
  first_ = mark;
  // yaml-cpp counts lines from 0; editors count from 1.
  error_ = file_ + ":" + std::to_string(mark.line + 1) + ": " + message;
}

void load_context::fail(std::string message) {
  if (failed_) return;
  failed_ = true;
  error_ = file_ + ": " + message;
}

void load_context::add_source(std::string path) {
  if (std::find(sources_.begin(), sources_.end(), path) == sources_.end()) sources_.push_back(std::move(path));
}

const YAML::Mark* load_context::mark_of(const std::string& key) const {
  auto it = marks_.find(key);
  return it == marks_.end() ? nullptr : &it->second;
}

section::section(load_context& ctx, std::string name, const YAML::Node& node) : ctx_(ctx), name_(std::move(name)) {
  // By value: yaml-cpp's iterator yields a proxy pair, and `it->first` makes
  // GCC 12 warn about a dangling temporary.
  for (const auto kv : node) {
    const YAML::Node& k = kv.first;
    if (!k.IsScalar()) {
      ctx_.fail(k.Mark(), "keys must be plain names");
      continue;
    }
    std::string key = k.Scalar();
    auto dup = std::find_if(entries_.begin(), entries_.end(), [&](const entry& e) { return e.key == key; });
    if (dup != entries_.end()) {
      std::string where = name_.empty() ? "" : " in section '" + name_ + "'";
      ctx_.fail(k.Mark(), "duplicate key '" + key + "'" + where + " (first set on line " +
                              std::to_string(dup->key_mark.line + 1) + ")");
      continue;
    }
    ctx_.remember(name_.empty() ? key : name_ + "." + key, k.Mark());
    entries_.push_back(entry{key, kv.second, k.Mark()});
  }
}

section::entry* section::find(std::string_view key) {
  known_.emplace_back(key);
  for (entry& e : entries_) {
    if (e.key == key) {
      e.used = true;
      return &e;
    }
  }
  return nullptr;
}

void section::fail_value(std::string_view key, const YAML::Mark& mark, std::string message) {
  ctx_.fail(mark, std::string(key) + ": " + message);
}

bool section::scalar(std::string_view key, entry*& e, std::string_view expected) {
  e = find(key);
  if (e == nullptr) return false;
  if (!e->value.IsScalar()) {
    fail_value(key, e->key_mark, "expected " + std::string(expected) + ", got " + describe_node(e->value));
    return false;
  }
  return true;
}

bool section::unsigned_value(std::string_view key, uint64_t& out, value_kind kind, range r) {
  entry* e = nullptr;
  std::string expected = describe(kind, r);
  if (!scalar(key, e, expected)) return false;
  const std::string& text = e->value.Scalar();
  uint64_t v = 0;
  bool parsed = false;
  switch (kind) {
    case value_kind::Integer: parsed = parse_unsigned(text, v); break;
    case value_kind::Size: parsed = parse_size(text, v); break;
    case value_kind::Duration: parsed = parse_duration(text, v); break;
  }
  if (!parsed || !r.contains(v)) {
    std::string hint;
    uint64_t bare = 0;
    if (kind == value_kind::Duration && parse_unsigned(text, bare)) {
      hint = " (a unit is required: " + text + "ms or " + text + "s?)";
    }
    fail_value(key, e->key_mark, "expected " + expected + ", got '" + text + "'" + hint);
    return false;
  }
  out = v;
  return true;
}

bool section::boolean(std::string_view key, bool& out) {
  entry* e = nullptr;
  if (!scalar(key, e, "true or false")) return false;
  const std::string& t = e->value.Scalar();
  if (t == "true" || t == "yes" || t == "on") {
    out = true;
  } else if (t == "false" || t == "no" || t == "off") {
    out = false;
  } else {
    fail_value(key, e->key_mark, "expected true or false, got '" + t + "'");
    return false;
  }
  return true;
}

void section::string(std::string_view key, std::string& out) {
  entry* e = find(key);
  if (e == nullptr) return;
  if (e->value.IsNull()) {
    out.clear();  // `file:` with nothing after it means ""
    return;
  }
  if (!e->value.IsScalar()) {
    fail_value(key, e->key_mark, "expected a string, got " + describe_node(e->value));
    return;
  }
  out = e->value.Scalar();
}

bool section::choice_index(std::string_view key, const std::vector<std::string>& names, size_t& index) {
  entry* e = nullptr;
  std::string expected = "one of " + quote_list(names);
  if (!scalar(key, e, expected)) return false;
  auto it = std::find(names.begin(), names.end(), e->value.Scalar());
  if (it == names.end()) {
    fail_value(key, e->key_mark, "expected " + expected + ", got '" + e->value.Scalar() + "'");
    return false;
  }
  index = static_cast<size_t>(it - names.begin());
  return true;
}

const YAML::Node* section::mapping(std::string_view key) {
  entry* e = find(key);
  if (e == nullptr) return nullptr;
  if (!e->value.IsMap()) {
    // `cache:` with nothing under it is an empty section, not a mistake.
    if (!e->value.IsNull()) {
      ctx_.fail(e->key_mark, "section '" + e->key + "' must be a mapping of keys, got " + describe_node(e->value));
    }
    return nullptr;
  }
  return &e->value;
}

const YAML::Node* section::sequence(std::string_view key) {
  entry* e = find(key);
  if (e == nullptr) return nullptr;
  if (!e->value.IsSequence()) {
    ctx_.fail(e->key_mark, std::string(key) + ": expected a list, got " + describe_node(e->value));
    return nullptr;
  }
  return &e->value;
}

const YAML::Node* section::any(std::string_view key) {
  entry* e = find(key);
  return e == nullptr ? nullptr : &e->value;
}

const YAML::Mark* section::key_mark(std::string_view key) const {
  for (const entry& e : entries_) {
    if (e.key == key) return &e.key_mark;
  }
  return nullptr;
}

bool section::string_list(std::string_view key, std::vector<std::string>& out, std::vector<YAML::Mark>* marks) {
  entry* e = find(key);
  if (e == nullptr) return false;
  std::vector<std::string> values;
  std::vector<YAML::Mark> value_marks;
  const YAML::Node& v = e->value;
  if (v.IsScalar()) {
    values.push_back(v.Scalar());
    value_marks.push_back(v.Mark());
  } else if (v.IsSequence()) {
    for (const YAML::Node& item : v) {
      if (!item.IsScalar()) {
        fail_value(key, item.Mark(), "expected a list of strings, got " + describe_node(item) + " in the list");
        return false;
      }
      values.push_back(item.Scalar());
      value_marks.push_back(item.Mark());
    }
  } else if (!v.IsNull()) {
    fail_value(key, e->key_mark, "expected a string or a list of strings, got " + describe_node(v));
    return false;
  }
  out = std::move(values);
  if (marks) *marks = std::move(value_marks);
  return true;
}

void section::finish() {
  for (const entry& e : entries_) {
    if (e.used) continue;
    std::string message =
        name_.empty() ? "unknown section '" + e.key + "'" : "unknown key '" + e.key + "' in section '" + name_ + "'";
    std::string hint = closest_key(e.key, known_);
    if (!hint.empty()) message += " (did you mean '" + hint + "'?)";
    ctx_.fail(e.key_mark, message);
  }
}

}  // namespace ithaca::config
