// The protocols a client connection may speak: memcached's binding protocol,
// -B (`server.binding_protocol:`) for every listener and -l proto[...]: for
// one. Negotiating tells them apart by the connection's first byte (0x80:
// binary); Ascii and Binary speak that one from the first byte on
// (protocol/parser_settings.h).
#pragma once

#include <cstdint>
#include <span>

#include "name_table.h"

namespace ithaca::kinds {

enum class binding_protocol : std::uint8_t { Negotiating, Ascii, Binary };

inline constexpr int kBindingProtocolCount = 3;

// The words of -B and `binding_protocol:`. memcached spells Negotiating two
// other ways, kept where they are read or written: "negotiating" in -l
// proto[...]: (config/listen_prefix.cc) and "auto-negotiate" in `stats
// settings` (config/settings_stats.cc).
inline constexpr enum_name<binding_protocol> kBindingProtocolNames[] = {
    {binding_protocol::Negotiating, "auto"},
    {binding_protocol::Ascii, "ascii"},
    {binding_protocol::Binary, "binary"},
};
constexpr std::span<const enum_name<binding_protocol>> name_table(binding_protocol) { return kBindingProtocolNames; }
static_assert(names_each_once(name_table(binding_protocol{}), kBindingProtocolCount));

}  // namespace ithaca::kinds
