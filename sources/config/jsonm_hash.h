// The hashes mcrouter's preprocessor computes (@hash, @weightedHash), as
// folly defines them, so that a config expands to the same values here:
// SpookyHash V2 (Bob Jenkins's, public domain) 64-bit with seed 0 for
// strings, folly's twang_mix64 for integers, and its "broken" FNV-64 (bytes
// taken as signed chars) that mcrouter's RendezvousHash hashes names with.
// Internal to the config library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace ithaca::config::jsonm {

uint64_t spooky_hash64(std::string_view data, uint64_t seed);
uint64_t twang_mix64(uint64_t key);
uint64_t fnv64_broken(std::string_view data);

// mcrouter's RendezvousHash: of the (name, weight) choices (weights >= 0,
// not all 0), the one `key` goes to. Throws std::invalid_argument when the
// weights add up to 0.
size_t rendezvous_pick(const std::vector<std::pair<std::string_view, double>>& choices, uint64_t key);

}  // namespace ithaca::config::jsonm
