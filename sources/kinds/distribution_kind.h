// How a pool spreads keys over its servers: twemproxy's `distribution:`
// names, jump, rendezvous, libmemcached's weighted ketama and mcrouter's pool
// hashes. The config readers parse the names; proxy/distribution/ builds each.
#pragma once

#include <cstdint>
#include <span>

#include "name_table.h"

namespace ithaca::kinds {

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
  ConstShard,          // mcrouter's ConstShard: a key "x:N:..." goes to server N, others by ch3
};

inline constexpr int kDistributionKindCount = 10;

inline constexpr enum_name<distribution_kind> kDistributionKindNames[] = {
    {distribution_kind::Ketama, "ketama"},
    {distribution_kind::Modula, "modula"},
    {distribution_kind::Random, "random"},
    {distribution_kind::Jump, "jump"},
    {distribution_kind::Rendezvous, "rendezvous"},
    {distribution_kind::LibmemcachedKetama, "libmemcached_ketama"},
    {distribution_kind::Ch3, "ch3"},
    {distribution_kind::WeightedCh3, "weighted_ch3"},
    {distribution_kind::McrouterCrc32, "mcrouter_crc32"},
    {distribution_kind::ConstShard, "const_shard"},
};
constexpr std::span<const enum_name<distribution_kind>> name_table(distribution_kind) { return kDistributionKindNames; }
static_assert(names_each_once(name_table(distribution_kind{}), kDistributionKindCount));

}  // namespace ithaca::kinds
