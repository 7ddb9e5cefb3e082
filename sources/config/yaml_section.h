// Reading one YAML mapping (a config section) strictly: every key must be
// known, every value must parse and be in range, a key may appear once.
// Internal to the config library (load.cc is its only user).
//
// Errors do not stop the reading: the context keeps the error that comes first
// in the file, so the user always sees the topmost mistake, whichever section
// function happened to run first.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "name_table.h"
#include "units.h"

namespace ithaca::config {

// Finds the known key closest to `key` (edit distance), or "" if none is close.
std::string closest_key(std::string_view key, const std::vector<std::string>& known);

class load_context {
 public:
  explicit load_context(std::string file) : file_(std::move(file)) {}

  // Records "file:line: message" unless an earlier (by position) error exists.
  void fail(const YAML::Mark& mark, std::string message);
  // An error with no position (the file cannot be read).
  void fail(std::string message);
  bool failed() const { return failed_; }
  const std::string& error() const { return error_; }
  const std::string& file() const { return file_; }

  // Where "section.key" was set, for errors found after loading (validate()).
  void remember(std::string key, const YAML::Mark& mark) { marks_[std::move(key)] = mark; }
  const YAML::Mark* mark_of(const std::string& key) const;

  // The text read was made from the file (mcrouter's preprocessor expanded
  // it): lines[L] is the file's line of the text's line L (1-based; 0:
  // unknown). Errors report the file's lines from then on.
  void map_lines(std::vector<int> lines) { line_map_ = std::move(lines); }

  // A file the config read besides its own (an mcrouter config's @import):
  // load_config lists it in config::sources, and the config watcher
  // (server/config_watch.h) watches it. Each path once, in reading order.
  void add_source(std::string path);
  std::vector<std::string>& sources() { return sources_; }

 private:
  std::string file_;
  std::vector<std::string> sources_;
  bool failed_ = false;
  bool positioned_ = false;
  YAML::Mark first_;
  std::string error_;
  std::map<std::string, YAML::Mark> marks_;
  std::vector<int> line_map_;
};

class section {
 public:
  // `node` must be a mapping (the caller checked). Duplicate keys are errors.
  // The unnamed section ("") is the top level, whose keys are section names.
  section(load_context& ctx, std::string name, const YAML::Node& node);

  // Each accessor leaves `out` unchanged when the key is absent, records an
  // error when the value is wrong, and marks the key as known.
  template <class T>
  void integer(std::string_view key, T& out, range r) {
    uint64_t v = out;
    if (unsigned_value(key, v, value_kind::Integer, r)) out = static_cast<T>(v);
  }
  void size(std::string_view key, uint64_t& out, range r) { unsigned_value(key, out, value_kind::Size, r); }
  void duration(std::string_view key, uint64_t& out_ms, range r) {
    unsigned_value(key, out_ms, value_kind::Duration, r);
  }
  // True when the key is present and its value one of YAML's booleans.
  bool boolean(std::string_view key, bool& out);
  void string(std::string_view key, std::string& out);
  // One of the names in `map` (exact spelling).
  template <class E>
  void choice(std::string_view key, E& out, std::initializer_list<std::pair<const char*, E>> map) {
    std::vector<std::string> names;
    for (const auto& [name, value] : map) names.emplace_back(name);
    size_t index = 0;
    if (choice_index(key, names, index)) out = (map.begin() + index)->second;
  }
  // The index of the value among `names` (exact spelling); true if present
  // and one of them.
  bool choice_index(std::string_view key, const std::vector<std::string>& names, size_t& index);
  // One of the enum's names, from its one table (kinds/name_table.h); an
  // error lists them in the table's order.
  template <kinds::named_enum E>
  void choice(std::string_view key, E& out) {
    size_t index = 0;
    if (choice_index(key, kinds::names_of<E>(), index)) out = name_table(E{})[index].value;
  }
  // One of `allowed` only (a use that takes fewer than the enum has), by
  // the table's names; an error lists them in this order.
  template <kinds::named_enum E>
  void choice(std::string_view key, E& out, std::initializer_list<E> allowed) {
    std::vector<std::string> names;
    for (E value : allowed) names.emplace_back(to_string(value));
    size_t index = 0;
    if (choice_index(key, names, index)) out = *(allowed.begin() + index);
  }
  // A scalar or a list of scalars, as strings: `tcp: a` or `tcp: [a, b]`.
  // True if the key is present and valid (then `out` and `marks` are set).
  bool string_list(std::string_view key, std::vector<std::string>& out, std::vector<YAML::Mark>* marks = nullptr);

  // A nested mapping (a section inside this one); nullptr if absent, or if it
  // is not a mapping (then an error is recorded).
  const YAML::Node* mapping(std::string_view key);

  // A list of nodes (e.g. a route's children); nullptr if absent, or if it
  // is not a list (then an error is recorded).
  const YAML::Node* sequence(std::string_view key);

  // The value of `key` whatever it is (a route may be a mapping or a
  // shorthand string); nullptr if absent. The caller checks its shape.
  const YAML::Node* any(std::string_view key);
  // Where `key` was written; nullptr if absent (does not mark it known).
  const YAML::Mark* key_mark(std::string_view key) const;

  // Refuses the keys no accessor asked for, suggesting the closest known one.
  void finish();

  load_context& context() { return ctx_; }
  // Records an error about `key`'s value (for section-specific parsing).
  void fail_value(std::string_view key, const YAML::Mark& mark, std::string message);

 private:
  struct entry {
    std::string key;
    YAML::Node value;
    YAML::Mark key_mark;
    bool used = false;
  };
  // The value of `key`, marking it known; nullptr if absent.
  entry* find(std::string_view key);
  bool scalar(std::string_view key, entry*& e, std::string_view expected);
  bool unsigned_value(std::string_view key, uint64_t& out, value_kind kind, range r);

  load_context& ctx_;
  std::string name_;
  std::vector<entry> entries_;
  std::vector<std::string> known_;
};

// What a node is, for "got ..." in messages: "'many'", "a list", "nothing".
std::string describe_node(const YAML::Node& node);

}  // namespace ithaca::config
