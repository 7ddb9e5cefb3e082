// The operation classes routes select and limit by, and which results fail
// over by class: get-like, set-like, delete, arithmetic, touch (and gat/gats:
// they change the item's TTL); None for flush, me and server commands.
// protocol::operation_of classifies a request; the config readers and the
// route kinds name the first five ("get", ...). mcrouter's operation names
// map onto them (route/routes/operation_route.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "name_table.h"

namespace ithaca::kinds {

enum class op_class : std::uint8_t { Get, Set, Delete, Arithmetic, Touch, None };

// The classes a config names (all but None).
inline constexpr std::size_t kOpClasses = 5;

inline constexpr enum_name<op_class> kOpClassNames[] = {
    {op_class::Get, "get"},       {op_class::Set, "set"},
    {op_class::Delete, "delete"}, {op_class::Arithmetic, "arithmetic"},
    {op_class::Touch, "touch"},   {op_class::None, "other"},
};
constexpr std::span<const enum_name<op_class>> name_table(op_class) { return kOpClassNames; }
static_assert(names_each_once(name_table(op_class{}), kOpClasses + 1));

// The class at `index` of the first kOpClasses (a table by class).
constexpr op_class op_class_at(std::size_t index) { return static_cast<op_class>(index); }

}  // namespace ithaca::kinds
