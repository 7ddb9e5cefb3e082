// The JSON value mcrouter's preprocessor (JSONM, jsonm_preprocessor.h) works
// on: folly::dynamic's seven types with its comparisons and casts, and the
// source line each value was written on, which the expanded config keeps so
// that an error still points at the file the user wrote. Its own parser
// (comments stripped as folly::json::stripComments does, trailing commas
// allowed as mcrouter's parseJsonString allows them) and printer (keys
// sorted, as mcrouter's --preprocessed output). Internal to the config
// library.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ithaca::config::jsonm {

// folly::dynamic's types, in its order (operator< compares types by it).
enum class value_type { Null, Array, Bool, Double, Int, Object, String };

// An error of the preprocessor or of a cast: mcrouter's std::logic_error.
// `line` is the source line it is about (1-based; 0 not yet known: the
// expansion that catches it fills in the line of the value it was expanding).
struct error : std::logic_error {
  error(const std::string& what, int l = 0) : std::logic_error(what), line(l) {}
  int line = 0;
};

struct member;

struct value {
  value_type type = value_type::Null;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  std::string s;
  std::vector<value> items;     // Array
  std::vector<member> members;  // Object: sorted by key, keys unique
  int line = 0;                 // where it was written (1-based), 0 unknown

  static value null(int line = 0);
  static value boolean(bool v, int line = 0);
  static value integer(int64_t v, int line = 0);
  static value real(double v, int line = 0);
  static value string(std::string v, int line = 0);
  static value array(int line = 0);
  static value object(int line = 0);

  bool is_null() const { return type == value_type::Null; }
  bool is_array() const { return type == value_type::Array; }
  bool is_bool() const { return type == value_type::Bool; }
  bool is_double() const { return type == value_type::Double; }
  bool is_int() const { return type == value_type::Int; }
  bool is_number() const { return is_int() || is_double(); }
  bool is_object() const { return type == value_type::Object; }
  bool is_string() const { return type == value_type::String; }

  // folly's typeName(): "null", "array", "boolean", "double", "int64",
  // "object", "string".
  const char* type_name() const;
  // Elements of an array, members of an object, bytes of a string.
  size_t size() const;
  bool empty() const { return size() == 0; }

  // Object members: find (nullptr if absent), insert or replace, remove.
  value* find(std::string_view key);
  const value* find(std::string_view key) const;
  void set(std::string key, value v);
  bool erase(std::string_view key);

  // folly's asInt/asDouble/asString/asBool: throw error on what they cannot
  // convert ("1.a" to a double, an array to anything).
  int64_t as_int() const;
  double as_double() const;
  std::string as_string() const;
  bool as_bool() const;
};

struct member {
  std::string key;
  value val;
};

// folly::dynamic's ==: an int equals a double of the same value; other
// types differ. And <: by type (value_type's order), then by value;
// objects throw error.
bool operator==(const value& a, const value& b);
bool less(const value& a, const value& b);

// Sets the line of `v` and of everything in it.
void set_lines(value& v, int line);

// Parses JSON with mcrouter's comments (`//` to the end of the line, `/* */`,
// an unclosed one running to the end of the text, as folly's stripComments
// has it) and trailing commas. Duplicate keys are refused. Throws error
// (with the line) on bad input.
value parse(std::string_view text);

// JSON text, keys sorted. Pretty: two-space indents, one member or element
// per line (folly's toPrettyJson).
std::string to_json(const value& v, bool pretty);

// Pretty JSON as to_json(v, true) prints it, and for each of its lines (from
// 1; [0] unused) the source line of the value that starts there (a closing
// bracket: its container's), 0 where unknown.
std::string to_json_with_lines(const value& v, std::vector<int>& source_lines);

// `s` as a JSON string, quoted and escaped (\" \\ \b \f \n \r \t, other control
// characters \u00XX), as to_json writes strings; for files written in mcrouter's
// JSON (its asynclog, its stats files).
std::string json_quote(std::string_view s);

// A double as folly prints it: the shortest text that reads back the same.
std::string double_text(double d);

}  // namespace ithaca::config::jsonm
