#include "jsonm_value.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace ithaca::config::jsonm {

value value::null(int line) {
  value v;
  v.line = line;
  return v;
}
value value::boolean(bool b, int line) {
  value v;
  v.type = value_type::Bool;
  v.b = b;
  v.line = line;
  return v;
}
value value::integer(int64_t i, int line) {
  value v;
  v.type = value_type::Int;
  v.i = i;
  v.line = line;
  return v;
}
value value::real(double d, int line) {
  value v;
  v.type = value_type::Double;
  v.d = d;
  v.line = line;
  return v;
}
value value::string(std::string s, int line) {
  value v;
  v.type = value_type::String;
  v.s = std::move(s);
  v.line = line;
  return v;
}
value value::array(int line) {
  value v;
  v.type = value_type::Array;
  v.line = line;
  return v;
}
value value::object(int line) {
  value v;
  v.type = value_type::Object;
  v.line = line;
  return v;
}

const char* value::type_name() const {
  switch (type) {
    case value_type::Null: return "null";
    case value_type::Array: return "array";
    case value_type::Bool: return "boolean";
    case value_type::Double: return "double";
    case value_type::Int: return "int64";
    case value_type::Object: return "object";
    case value_type::String: return "string";
  }
  return "?";
}

size_t value::size() const {
  switch (type) {
    case value_type::Array: return items.size();
    case value_type::Object: return members.size();
    case value_type::String: return s.size();
    default: throw error(std::string("size of ") + type_name());
  }
}

namespace {

auto jsonm_lower(std::vector<member>& m, std::string_view key) {
  return std::lower_bound(m.begin(), m.end(), key, [](const member& a, std::string_view k) { return a.key < k; });
}

}  // namespace

value* value::find(std::string_view key) {
  auto it = jsonm_lower(members, key);
  return it != members.end() && it->key == key ? &it->val : nullptr;
}

const value* value::find(std::string_view key) const { return const_cast<value*>(this)->find(key); }

void value::set(std::string key, value v) {
  auto it = jsonm_lower(members, key);
  if (it != members.end() && it->key == key) {
    it->val = std::move(v);
  } else {
    members.insert(it, member{std::move(key), std::move(v)});
  }
}

bool value::erase(std::string_view key) {
  auto it = jsonm_lower(members, key);
  if (it == members.end() || it->key != key) return false;
  members.erase(it);
  return true;
}

namespace {

std::string_view jsonm_trim(std::string_view t) {
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  return t;
}

[[noreturn]] void cast_fail(const value& v, const char* to, const std::string& why) {
  throw error(std::string("Can not cast ") + v.type_name() + " to " + to + ":\n" + why);
}

}  // namespace

int64_t value::as_int() const {
  switch (type) {
    case value_type::Int: return i;
    case value_type::Bool: return b ? 1 : 0;
    case value_type::Double: {
      // folly::to<int64_t>(double): only a value it represents exactly.
      if (!std::isfinite(d) || d != std::trunc(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0) {
        cast_fail(*this, "int", "loss of precision: " + double_text(d));
      }
      return static_cast<int64_t>(d);
    }
    case value_type::String: {
      std::string_view t = jsonm_trim(s);
      if (!t.empty() && t.front() == '+') t.remove_prefix(1);
      int64_t out = 0;
      auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
      if (t.empty() || ec != std::errc() || end != t.data() + t.size()) {
        cast_fail(*this, "int", "Invalid integer: \"" + s + "\"");
      }
      return out;
    }
    default: cast_fail(*this, "int", std::string("TypeError: ") + type_name());
  }
}

double value::as_double() const {
  switch (type) {
    case value_type::Double: return d;
    case value_type::Int: return static_cast<double>(i);
    case value_type::Bool: return b ? 1 : 0;
    case value_type::String: {
      std::string_view t = jsonm_trim(s);
      if (!t.empty() && t.front() == '+') t.remove_prefix(1);
      double out = 0;
      auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
      if (t.empty() || ec != std::errc() || end != t.data() + t.size()) {
        cast_fail(*this, "double", "Invalid double: \"" + s + "\"");
      }
      return out;
    }
    default: cast_fail(*this, "double", std::string("TypeError: ") + type_name());
  }
}

std::string value::as_string() const {
  switch (type) {
    case value_type::String: return s;
    case value_type::Int: return std::to_string(i);
    case value_type::Double: return double_text(d);
    case value_type::Bool: return b ? "1" : "0";  // folly::to<std::string>(bool)
    default: cast_fail(*this, "string", std::string("TypeError: ") + type_name());
  }
}

bool value::as_bool() const {
  switch (type) {
    case value_type::Bool: return b;
    case value_type::Int: return i != 0;
    case value_type::Double: return d != 0;
    case value_type::String: {
      // folly::to<bool>(string): these words, any case, and 0/1.
      std::string t(jsonm_trim(s));
      std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
      for (const char* yes : {"1", "true", "yes", "on", "y", "t"}) {
        if (t == yes) return true;
      }
      for (const char* no : {"0", "false", "no", "off", "n", "f"}) {
        if (t == no) return false;
      }
      cast_fail(*this, "boolean", "Invalid value for bool: \"" + s + "\"");
    }
    default: cast_fail(*this, "boolean", std::string("TypeError: ") + type_name());
  }
}

bool operator==(const value& a, const value& b) {
  if (a.type != b.type) {
    if (a.is_number() && b.is_number()) {
      const value& integer = a.is_int() ? a : b;
      const value& real = a.is_int() ? b : a;
      return static_cast<double>(integer.i) == real.d;
    }
    return false;
  }
  switch (a.type) {
    case value_type::Null: return true;
    case value_type::Bool: return a.b == b.b;
    case value_type::Int: return a.i == b.i;
    case value_type::Double: return a.d == b.d;
    case value_type::String: return a.s == b.s;
    case value_type::Array: return a.items == b.items;
    case value_type::Object:
      return a.members.size() == b.members.size() &&
             std::equal(a.members.begin(), a.members.end(), b.members.begin(),
                        [](const member& x, const member& y) { return x.key == y.key && x.val == y.val; });
  }
  return false;
}

bool less(const value& a, const value& b) {
  if (a.is_object() || b.is_object()) throw error("TypeError: can not compare objects");
  if (a.type != b.type) return a.type < b.type;
  switch (a.type) {
    case value_type::Null: return false;
    case value_type::Bool: return a.b < b.b;
    case value_type::Int: return a.i < b.i;
    case value_type::Double: return a.d < b.d;
    case value_type::String: return a.s < b.s;
    case value_type::Array:
      return std::lexicographical_compare(a.items.begin(), a.items.end(), b.items.begin(), b.items.end(), less);
    case value_type::Object: break;
  }
  return false;
}

void set_lines(value& v, int line) {
  v.line = line;
  for (value& item : v.items) set_lines(item, line);
  for (member& m : v.members) set_lines(m.val, line);
}

std::string double_text(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d < 0 ? "-Infinity" : "Infinity";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, ec == std::errc() ? end : buf);
}

// ------------------------------------------------------------ parser

namespace {

// folly::json::stripComments, newlines kept so that lines stay right: `//`
// to the end of its line, `/* */` (one never closed runs to the end, without
// an error, as in mcrouter); strings are left alone.
std::string jsonm_strip_comments(std::string_view in) {
  enum class state { None, InString, Block, Line } st = state::None;
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    const char next = i + 1 < in.size() ? in[i + 1] : '\0';
    switch (st) {
      case state::None:
        if (c == '/' && next == '*') {
          st = state::Block;
          ++i;
        } else if (c == '/' && next == '/') {
          st = state::Line;
          ++i;
        } else {
          if (c == '"') st = state::InString;
          out.push_back(c);
        }
        break;
      case state::InString:
        if (c == '\\') {
          if (i + 1 == in.size()) throw error("Invalid JSONC: string is not terminated");
          out.push_back(c);
          out.push_back(next);
          ++i;
          continue;
        }
        if (c == '"') st = state::None;
        out.push_back(c);
        break;
      case state::Block:
        if (c == '\n') {
          out.push_back(c);
        } else if (c == '*' && next == '/') {
          st = state::None;
          ++i;
        }
        break;
      case state::Line:
        if (c == '\n') {
          out.push_back(c);
          st = state::None;
        }
        break;
    }
  }
  return out;
}

class jsonm_parser {
 public:
  explicit jsonm_parser(std::string_view t) : t_(t) {}

  value document() {
    value v = parse_value(0);
    skip();
    if (p_ < t_.size()) fail("parsing didn't consume all input");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 100;  // folly's recursion_limit

  [[noreturn]] void fail(const std::string& what) const {
    std::string near(t_.substr(p_, 20));
    throw error("json parse error: " + what + (near.empty() ? "" : " near '" + near + "'"), line_);
  }

  void skip() {
    while (p_ < t_.size()) {
      const char c = t_[p_];
      if (c == '\n') {
        ++line_;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        break;
      }
      ++p_;
    }
  }

  bool take(char c) {
    skip();
    if (p_ < t_.size() && t_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }

  value parse_value(int depth) {
    if (depth > kMaxDepth) fail("recursion limit exceeded");
    skip();
    if (p_ >= t_.size()) fail("unexpected end of input");
    const int at = line_;
    const char c = t_[p_];
    if (c == '{') return parse_object(depth, at);
    if (c == '[') return parse_array(depth, at);
    if (c == '"') return value::string(parse_string(), at);
    if (word("true")) return value::boolean(true, at);
    if (word("false")) return value::boolean(false, at);
    if (word("null")) return value::null(at);
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return parse_number(at);
    fail("expected json value");
  }

  bool word(std::string_view w) {
    if (t_.substr(p_, w.size()) != w) return false;
    p_ += w.size();
    return true;
  }

  value parse_object(int depth, int at) {
    ++p_;
    value obj = value::object(at);
    while (true) {
      skip();
      if (take('}')) return obj;
      if (p_ >= t_.size() || t_[p_] != '"') fail("expected a string key");
      const int key_line = line_;
      std::string key = parse_string();
      if (!take(':')) fail("expected ':' in object");
      value v = parse_value(depth + 1);
      if (obj.find(key) != nullptr) throw error("json parse error: duplicate key '" + key + "'", key_line);
      obj.set(std::move(key), std::move(v));
      if (take(',')) continue;  // a trailing comma is allowed
      if (take('}')) return obj;
      fail("expected ',' or '}' in object");
    }
  }

  value parse_array(int depth, int at) {
    ++p_;
    value arr = value::array(at);
    while (true) {
      if (take(']')) return arr;
      arr.items.push_back(parse_value(depth + 1));
      if (take(',')) continue;
      if (take(']')) return arr;
      fail("expected ',' or ']' in array");
    }
  }

  value parse_number(int at) {
    const size_t start = p_;
    if (t_[p_] == '-') ++p_;
    bool real = false;
    while (p_ < t_.size()) {
      const char c = t_[p_];
      if (c == '.' || c == 'e' || c == 'E' || ((c == '+' || c == '-') && (t_[p_ - 1] == 'e' || t_[p_ - 1] == 'E'))) {
        real = true;
      } else if (!std::isdigit(static_cast<unsigned char>(c))) {
        break;
      }
      ++p_;
    }
    const std::string_view text = t_.substr(start, p_ - start);
    if (!real) {
      int64_t i = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
      if (ec == std::errc() && end == text.data() + text.size()) return value::integer(i, at);
      if (ec == std::errc::result_out_of_range) fail("integer out of range: " + std::string(text));
      fail("expected a number");
    }
    double d = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (ec != std::errc() || end != text.data() + text.size()) fail("bad number: " + std::string(text));
    return value::real(d, at);
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  uint32_t hex4() {
    if (p_ + 4 > t_.size()) fail("expected 4 hex digits");
    uint32_t v = 0;
    auto [end, ec] = std::from_chars(t_.data() + p_, t_.data() + p_ + 4, v, 16);
    if (ec != std::errc() || end != t_.data() + p_ + 4) fail("expected 4 hex digits");
    p_ += 4;
    return v;
  }

  std::string parse_string() {
    ++p_;  // the opening quote
    std::string out;
    while (true) {
      if (p_ >= t_.size()) fail("unterminated string");
      const char c = t_[p_++];
      if (c == '"') return out;
      if (c == '\n') fail("a line break inside a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (p_ >= t_.size()) fail("unterminated string");
      const char e = t_[p_++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && t_.substr(p_, 2) == "\\u") {
            p_ += 2;
            const uint32_t low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: fail(std::string("unknown escape \\") + e);
      }
    }
  }

  std::string_view t_;
  size_t p_ = 0;
  int line_ = 1;
};

// ------------------------------------------------------------ printer

void jsonm_escape(std::string_view s, std::string& out) {
  out.push_back('"');
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          static const char* kHex = "0123456789abcdef";
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xF]);
        } else {
          out.push_back(ch);
        }
    }
  }
  out.push_back('"');
}

class jsonm_printer {
 public:
  jsonm_printer(bool pretty, std::vector<int>* lines) : pretty_(pretty), lines_(lines) {
    if (lines_) lines_->assign(2, 0);
  }

  void print(const value& v, int indent) {
    note(v.line);
    switch (v.type) {
      case value_type::Null: out_ += "null"; break;
      case value_type::Bool: out_ += v.b ? "true" : "false"; break;
      case value_type::Int: out_ += std::to_string(v.i); break;
      case value_type::Double: out_ += double_text(v.d); break;
      case value_type::String: jsonm_escape(v.s, out_); break;
      case value_type::Array:
        if (v.items.empty()) {
          out_ += "[]";
          break;
        }
        out_ += '[';
        for (size_t k = 0; k < v.items.size(); ++k) {
          if (k) out_ += ',';
          newline(indent + 1);
          print(v.items[k], indent + 1);
        }
        newline(indent);
        note(v.line);
        out_ += ']';
        break;
      case value_type::Object:
        if (v.members.empty()) {
          out_ += "{}";
          break;
        }
        out_ += '{';
        for (size_t k = 0; k < v.members.size(); ++k) {
          if (k) out_ += ',';
          newline(indent + 1);
          jsonm_escape(v.members[k].key, out_);
          out_ += pretty_ ? ": " : ":";
          print(v.members[k].val, indent + 1);
        }
        newline(indent);
        note(v.line);
        out_ += '}';
        break;
    }
  }

  std::string take() { return std::move(out_); }

 private:
  void newline(int indent) {
    if (!pretty_) return;
    out_ += '\n';
    out_.append(static_cast<size_t>(indent) * 2, ' ');
    if (lines_) lines_->push_back(0);
  }
  // The first value that starts on a line names its source line.
  void note(int line) {
    if (lines_ && lines_->back() == 0) lines_->back() = line;
  }

  bool pretty_;
  std::vector<int>* lines_;
  std::string out_;
};

}  // namespace

value parse(std::string_view text) { return jsonm_parser(jsonm_strip_comments(text)).document(); }

std::string to_json(const value& v, bool pretty) {
  jsonm_printer p(pretty, nullptr);
  p.print(v, 0);
  return p.take();
}

std::string to_json_with_lines(const value& v, std::vector<int>& source_lines) {
  jsonm_printer p(true, &source_lines);
  p.print(v, 0);
  return p.take();
}

std::string json_quote(std::string_view s) {
  std::string out;
  jsonm_escape(s, out);
  return out;
}

}  // namespace ithaca::config::jsonm
