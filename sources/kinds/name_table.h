// One name table per enum. An enum that the config readers and the runtime
// share (hash_kind.h, distribution_kind.h, backend_protocol.h,
// binding_protocol.h) lists its {value, name} pairs once, beside its
// definition, in a function `name_table(E)` that argument-dependent lookup
// finds; to_string, from_string and the list of names are generated here from
// that one table, so a name is written in one file. Pure and constexpr;
// callable from any thread.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ithaca::kinds {

template <class E>
struct enum_name {
  E value;
  const char* name;
};

// An enum with a table: `name_table(E{})` returns its pairs, in the order
// messages list them ("expected one of 'auto', 'ascii', 'meta'").
template <class E>
concept named_enum = std::is_enum_v<E> && requires(E e) {
  { name_table(e) } -> std::convertible_to<std::span<const enum_name<E>>>;
};

// The value's name; "?" for a value outside the enum (a cast gone wrong).
template <named_enum E>
constexpr const char* to_string(E value) {
  for (const enum_name<E>& e : name_table(E{})) {
    if (e.value == value) return e.name;
  }
  return "?";
}

// The value named `name` (exact spelling); false and `out` untouched for any
// other name.
template <named_enum E>
constexpr bool from_string(std::string_view name, E& out) {
  for (const enum_name<E>& e : name_table(E{})) {
    if (name == e.name) {
      out = e.value;
      return true;
    }
  }
  return false;
}

// Every name, in the table's order.
template <named_enum E>
std::vector<std::string> names_of() {
  std::vector<std::string> out;
  for (const enum_name<E>& e : name_table(E{})) out.emplace_back(e.name);
  return out;
}

// The names alone, in the table's order, as a constant array (a route
// option's choices, route_kind_info.h).
template <class E, std::size_t N>
constexpr std::array<const char*, N> name_array(const enum_name<E> (&table)[N]) {
  std::array<const char*, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = table[i].name;
  return out;
}

// For a static_assert beside a table: it names each of the enum's `count`
// values (0 .. count-1) exactly once.
template <class E>
constexpr bool names_each_once(std::span<const enum_name<E>> table, std::size_t count) {
  if (table.size() != count) return false;
  for (std::size_t v = 0; v < count; ++v) {
    std::size_t seen = 0;
    for (const enum_name<E>& e : table) seen += static_cast<std::size_t>(e.value) == v ? 1 : 0;
    if (seen != 1) return false;
  }
  return true;
}

}  // namespace ithaca::kinds
