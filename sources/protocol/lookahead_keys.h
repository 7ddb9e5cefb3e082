// lookahead_keys: the keys a run of pipelined requests will look up, read
// ahead of the parser so the store can prefetch their buckets and items
// (store::prefetch) before the first of them executes. A hint only: it
// reads what it recognises (text retrievals and storage commands, meta
// commands, binary requests) and stops at the first line it does not, at
// an incomplete request, or when `out` is full. The parser still parses
// and judges every byte; nothing here is trusted. Pure function.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace ithaca::protocol {

// Fills `out` with keys from the complete requests at the start of `input`;
// returns how many. Keys point into `input`.
std::size_t lookahead_keys(std::string_view input, std::span<std::string_view> out);

}  // namespace ithaca::protocol
