#pragma once
// twemproxy's key hash under each of its `hash:` choices
// (kinds/hash_kind.h), each giving exactly the 32-bit value nutcracker
// computes (on x86-64, where its `char` is signed: see hash_functions.h).
// Pure functions of their input; callable from any thread.

#include <cstdint>
#include <string_view>

#include "hash_kind.h"

namespace ithaca::proxy {

// The one hash_kind (kinds/hash_kind.h: its values and names), by the name
// the proxy's code has always used.
using kinds::hash_kind;

// twemproxy's value of `key` under `kind`, bit for bit.
std::uint32_t hash_key(hash_kind kind, std::string_view key);

}  // namespace ithaca::proxy
