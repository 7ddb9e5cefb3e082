// What ithaca speaks to a pool's servers: a pool's `protocol:` setting, and
// the form the backend codec (protocol/backend_call.h) writes on one
// connection. Auto is a setting only: each new connection asks the server
// (`mn`) and speaks Meta if it answers MN, Ascii if it answers ERROR
// (proxy/protocol_probe.h), so a call never starts with Auto.
#pragma once

#include <cstdint>
#include <span>

#include "name_table.h"

namespace ithaca::kinds {

enum class backend_protocol : std::uint8_t { Ascii, Meta, Auto };

inline constexpr int kBackendProtocolCount = 3;

// In the order `protocol:`'s error message lists them.
inline constexpr enum_name<backend_protocol> kBackendProtocolNames[] = {
    {backend_protocol::Auto, "auto"},
    {backend_protocol::Ascii, "ascii"},
    {backend_protocol::Meta, "meta"},
};
constexpr std::span<const enum_name<backend_protocol>> name_table(backend_protocol) { return kBackendProtocolNames; }
static_assert(names_each_once(name_table(backend_protocol{}), kBackendProtocolCount));

}  // namespace ithaca::kinds
