#pragma once
// How a pool spreads keys over its servers.

#include <cstdint>
#include <string_view>

namespace ithaca::proxy {

enum class distribution_kind : std::uint8_t {
    Ketama,              // twemproxy's ketama continuum, bit-exact
    Modula,              // twemproxy's modula: hash % total weight
    Random,              // twemproxy's random: a uniformly random server, weights ignored
    Jump,                // Lamping & Veach jump consistent hash over weight buckets
    Rendezvous,          // highest random weight, weighted
    LibmemcachedKetama,  // libmemcached's MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED (md5 only)
    Ch3,                 // mcrouter's default pool hash (furc), bit-exact
    WeightedCh3,         // mcrouter's WeightedCh3: ch3 with a kept fraction per server
    McrouterCrc32,       // mcrouter's Crc32: crc32 % servers
};

inline constexpr int kDistributionKindCount = 9;

// "ketama", "modula", "random" (twemproxy's `distribution:` names), "jump",
// "rendezvous", "libmemcached_ketama", and mcrouter's "ch3", "weighted_ch3",
// "mcrouter_crc32". Returns false (out untouched) for
// anything else.
bool parse_distribution_kind(std::string_view name, distribution_kind& out);
std::string_view to_string(distribution_kind kind);

}  // namespace ithaca::proxy
