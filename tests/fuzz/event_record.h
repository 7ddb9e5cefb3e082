// How a harness records what a parser produced, so that two feeds of one
// stream can be compared. The same describe function writes either into a
// `digest` (a 64-bit FNV-1a of every field: no allocation, the fast path run
// on every execution) or into an `event_text` (readable, built only to print
// a difference after two digests disagreed). A digest collision could hide
// a difference; at 64 bits that is not a practical concern.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace ithaca::fuzz {

class digest {
 public:
  template <typename T>
  void num(const char* /*name*/, T v) {
    static_assert(std::is_integral_v<T>);
    mix(static_cast<std::uint64_t>(v));
  }
  void str(const char* /*name*/, std::string_view v) {
    mix(v.size());
    for (const char c : v) byte(static_cast<unsigned char>(c));
  }
  std::uint64_t value() const { return h_; }

 private:
  void byte(unsigned char b) {
    h_ ^= b;
    h_ *= 0x100000001b3ULL;
  }
  void mix(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) byte(static_cast<unsigned char>(v >> (8 * i)));
  }
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

class event_text {
 public:
  template <typename T>
  void num(const char* name, T v) {
    static_assert(std::is_integral_v<T>);
    s_ += name;
    s_ += '=';
    s_ += std::to_string(v);
    s_ += ' ';
  }
  void str(const char* name, std::string_view v) {
    s_ += name;
    s_ += "=[";
    s_ += v;
    s_ += "] ";
  }
  const std::string& value() const { return s_; }

 private:
  std::string s_;
};

}  // namespace ithaca::fuzz
